/**
 * meshcap's small public API: the same engine the CLI and the CNI plugin use.
 * Config → Plan (pure) → text (pure) or apply (side effects behind a Runner).
 */
export { loadCommand } from './commands/load.js';
export { buildSidecarPlan } from './model/sidecar/build.js';
export { buildAmbientPlan } from './model/ambient/build.js';
export { buildAmbientHostPlan } from './model/ambient/host.js';
export { renderRestore } from './render/restore.js';
export { renderSaveDryRun, renderSaveFamily } from './render/save.js';
export { renderIstioDryRun } from './render/istio-framing.js';
export { applyPlan, cleanupPlan, checkPlan } from './exec/apply.js';
export { createSpawnRunner } from './exec/spawn-runner.js';
export type { Runner, RunResult } from './exec/runner.js';
export type { Plan } from './model/plan.js';
export type { Rule } from './model/rule.js';
export * from './errors.js';

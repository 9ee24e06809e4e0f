import { existsSync } from 'node:fs';
import type { Host } from '../config/host.js';
import { loadCommand, type Loaded } from '../commands/load.js';
import { classifyCapture, type CaptureState } from '../analyze/capture-state.js';
import { formatDriftLines } from '../analyze/drift.js';
import type { Sandbox } from '../cri/runtime.js';
import { ConfigError, MeshcapError } from '../errors.js';
import { applyLoaded, checkLoaded } from '../exec/engine.js';
import { withNamespaceLock } from '../exec/lock.js';
import { countingRunner, type Runner } from '../exec/runner.js';
import type { Logger } from '../log.js';
import { messageWithOrigin, type PluginOptions } from '../node/options.js';
import { podExecOptions, podOptions } from '../node/pod-plan.js';
import { declaresAnnotations, decidePodEnrollment } from '../node/enrollment.js';
import { judgeBypass } from '../config/bypass-policy.js';
import type { NetConf } from '../node/plugin-config.js';

/**
 * One sandbox of the node against meshcap-cni's config: the enrollment ADD would decide, then — for an
 * enrolled pod — the same comparison as `--verify`/CHECK under the same namespace lock as ADD/DEL. A pod that
 * holds exactly its rules costs reads only; one that lost them (or holds others of ours) gets the ordinary
 * apply/reconcile when repairing. Host-network and non-enrolled pods are never read or written.
 */

export type PodState = CaptureState | 'not-enrolled' | 'error';

export interface PodReport {
  readonly namespace: string;
  readonly name: string;
  readonly id: string;
  /** What the sweep found. */
  readonly state: PodState;
  readonly reason: string;
  /** The sweep put the pod's rules back (it was bypassing or drifted). */
  readonly repaired: boolean;
  /** Processes started for this pod (reads, plus the apply when repaired). */
  readonly processes: number;
}

export interface PodCheckDeps {
  readonly conf: NetConf;
  readonly host: Host;
  readonly makeRunner: (netns: string | undefined) => Runner;
  readonly log: Logger;
  /** Change nothing when false (`--repair false`, node-status). */
  readonly repair: boolean;
  /** Whether the sandbox is still ready just before a repair (a pod being stopped is left alone). */
  readonly stillReady: (id: string) => Promise<boolean>;
}

/** A sweep waits this long for an ADD/DEL holding the pod's lock; then the pod is left to the next sweep. */
const SWEEP_LOCK_WAIT_MS = 10_000;

function describeError(err: unknown, opts?: PluginOptions): string {
  if (err instanceof ConfigError && opts !== undefined) return messageWithOrigin(err, opts);
  return err instanceof Error ? err.message : String(err);
}

/** The enrolled pod's plan, or the reason there is none. */
function loadPod(sandbox: Sandbox, deps: PodCheckDeps): { loaded: Loaded; netns: string } | { state: PodState; reason: string } {
  if (sandbox.hostNetwork) return { state: 'not-enrolled', reason: "host network: the pod shares the node's namespace (never touched)" };
  const annotations = declaresAnnotations(deps.conf) ? sandbox.annotations : undefined;
  let decision;
  try {
    decision = decidePodEnrollment(deps.conf, { namespace: sandbox.namespace, name: sandbox.name, annotations });
  } catch (err) {
    return { state: 'error', reason: describeError(err) };
  }
  if (!decision.enrolled) return { state: 'not-enrolled', reason: decision.reason };
  // A pod the platform's bypass policy denies is reported, never repaired: the agent applies no denied exclusion.
  const verdict = judgeBypass(deps.conf.bypass_policy, decision.annotations, sandbox.namespace);
  if (!verdict.allowed) return { state: 'error', reason: verdict.reason };
  if (sandbox.netns === undefined) return { state: 'error', reason: 'the runtime reports no network namespace path for this sandbox' };
  const opts = podOptions(deps.conf, decision.annotations, sandbox.netns);
  try {
    return { loaded: loadCommand(opts.command, opts.flags, {}, deps.host), netns: sandbox.netns };
  } catch (err) {
    return { state: 'error', reason: describeError(err, opts) };
  }
}

/** Checks one sandbox (and repairs it when asked); undefined when the sandbox went away meanwhile. */
export async function checkPod(sandbox: Sandbox, deps: PodCheckDeps): Promise<PodReport | undefined> {
  const base = { namespace: sandbox.namespace, name: sandbox.name, id: sandbox.id };
  const pod = loadPod(sandbox, deps);
  if (!('loaded' in pod)) return { ...base, ...pod, repaired: false, processes: 0 };
  const { loaded, netns } = pod;
  const runner = countingRunner(deps.makeRunner(netns));
  const exec = podExecOptions(deps.conf, deps.host, false);
  const log = deps.log.child(base);
  try {
    return await withNamespaceLock(netns, SWEEP_LOCK_WAIT_MS, async () => {
      const drift = await checkLoaded(runner, loaded, exec);
      const state = classifyCapture(drift, loaded.plan, loaded.nft !== undefined);
      const differences = formatDriftLines(drift);
      const reason = state === 'captured' ? 'the namespace holds exactly its rules' : `${differences.length} difference(s): ${differences.slice(0, 2).join('; ')}`;
      if (state === 'captured' || !deps.repair) return { ...base, state, reason, repaired: false, processes: runner.count() };
      if (!(await deps.stillReady(sandbox.id))) return undefined;
      await applyLoaded(runner, loaded, exec, log);
      log.info({ found: state, missing: drift.missing.length, unexpected: drift.unexpected.length, first: differences.slice(0, 3) }, 'repaired pod');
      return { ...base, state, reason, repaired: true, processes: runner.count() };
    });
  } catch (err) {
    // A sandbox removed during the sweep: its namespace is gone, which is no error.
    if (!existsSync(netns)) return undefined;
    const reason = err instanceof MeshcapError ? err.message : `internal error: ${describeError(err)}`;
    return { ...base, state: 'error', reason, repaired: false, processes: runner.count() };
  }
}

import { existsSync, writeFileSync } from 'node:fs';
import { CommanderError } from 'commander';
import { ConfigError, EnvironmentError, ExitCode, MeshcapError } from '../errors.js';
import { createLogger, levelFromIstio, type LogSink, type Logger } from '../log.js';
import type { Env } from '../config/sources.js';
import type { Host } from '../config/host.js';
import { describeIgnoredInputs, loadSidecarConfig } from '../config/sidecar.js';
import type { SidecarConfig } from '../config/schema.js';
import { buildSidecarPlan } from '../model/sidecar/build.js';
import type { Plan } from '../model/plan.js';
import { renderIstioDryRun } from '../render/istio-framing.js';
import { renderIstioCleanupDryRun } from '../render/cleanup.js';
import { renderSaveDryRun } from '../render/save.js';
import { applyPlan, cleanupPlan } from '../exec/apply.js';
import { createExecaRunner } from '../exec/execa-runner.js';
import { countingRunner, type Runner } from '../exec/runner.js';
import { runValidation } from '../exec/validate.js';
import { buildProgram } from './program.js';

export interface CliDeps {
  readonly env: Env;
  readonly host: Host;
  readonly stdout: LogSink;
  readonly stderr: LogSink;
  /** Makes the runner for a namespace (default: execa, through nsenter when --netns is set). */
  readonly makeRunner?: (netns: string | undefined) => Runner;
}

function dryRun(cfg: SidecarConfig, plan: Plan, log: Logger, out: LogSink): void {
  log.info({ families: plan.families, rules: plan.rules.length, ipv6: cfg.ipv6Reason }, 'planned sidecar rules');
  const istio = cfg.cleanupOnly ? renderIstioCleanupDryRun(plan) : renderIstioDryRun(plan);
  if (cfg.dryRunFilePath !== undefined) {
    try {
      writeFileSync(cfg.dryRunFilePath, istio);
    } catch (err) {
      throw new EnvironmentError(`cannot write DRY_RUN_FILE_PATH ${cfg.dryRunFilePath}: ${(err as Error).message}`, { cause: err });
    }
  }
  // After a cleanup an empty namespace holds none of our rules: the save format prints nothing.
  out.write(cfg.dryRunFormat === 'istio' ? istio : cfg.cleanupOnly ? '' : renderSaveDryRun(plan));
}

async function execute(cfg: SidecarConfig, plan: Plan, log: Logger, deps: CliDeps): Promise<void> {
  if (cfg.netns !== undefined && !existsSync(cfg.netns)) throw new EnvironmentError(`network namespace ${cfg.netns} does not exist (--netns)`);
  if (cfg.runValidation && cfg.netns !== undefined) {
    throw new ConfigError('--run-validation', 'true', 'validation probes the current namespace and cannot be combined with --netns; run it inside the pod');
  }
  const started = performance.now();
  const runner = countingRunner((deps.makeRunner ?? createExecaRunner)(cfg.netns));
  const opts = { reconcile: cfg.reconcile, forceApply: cfg.forceApply, forcedBackend: cfg.forceIptablesBinary };
  if (cfg.cleanupOnly) {
    const report = await cleanupPlan(runner, plan, opts, log);
    log.info({ families: report.families, processes: runner.count(), ms: Math.round(performance.now() - started) }, 'cleaned up');
    return;
  }
  if (!cfg.skipRuleApply) {
    const report = await applyPlan(runner, plan, opts, log);
    log.info({ families: report.families, rules: plan.rules.length, ipv6: cfg.ipv6Reason, processes: runner.count(), ms: Math.round(performance.now() - started) }, 'applied');
  }
  if (cfg.runValidation) {
    for (const family of plan.families) {
      await runValidation({ family, outboundPort: cfg.envoyPort, inboundPort: cfg.inboundCapturePort, probePort: cfg.iptablesProbePort, timeoutMs: cfg.probeTimeout }, log);
    }
  }
}

/** Turns commander's parse failures into our one-line config errors; help and version are not errors. */
function parseArgv(argv: readonly string[], deps: CliDeps) {
  const { program, readFlags } = buildProgram({ out: (s) => deps.stdout.write(s), err: (s) => deps.stderr.write(s) });
  try {
    program.parse(argv as string[], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return undefined;
      throw new ConfigError('command line', argv.join(' '), err.message.replace(/^error: /, ''));
    }
    throw err;
  }
  return readFlags();
}

/** The meshcap command: argv (without node and script) → exit code. Never exits the process itself. */
export async function runMeshcap(argv: readonly string[], deps: CliDeps): Promise<number> {
  let log: Logger | undefined;
  try {
    const flags = parseArgv(argv, deps);
    if (flags === undefined) return ExitCode.ok;
    const cfg = loadSidecarConfig(flags, deps.env, deps.host);
    log = createLogger({ level: levelFromIstio(cfg.logOutputLevel), format: cfg.logFormat, sink: deps.stderr });
    for (const note of describeIgnoredInputs(cfg)) log.warn(note);
    const plan = buildSidecarPlan(cfg);
    if (cfg.dryRun) dryRun(cfg, plan, log, deps.stdout);
    else await execute(cfg, plan, log, deps);
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof MeshcapError) {
      if (log) log.error({ code: err.code }, err.message);
      else deps.stderr.write(`meshcap: ${err.message}\n`);
      return err.exitCode;
    }
    deps.stderr.write(`meshcap: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return ExitCode.bug;
  }
}

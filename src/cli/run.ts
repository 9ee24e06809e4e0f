import { writeFileSync } from 'node:fs';
import { CommanderError } from 'commander';
import { ConfigError, EnvironmentError, ExitCode, MeshcapError } from '../errors.js';
import { createLogger, levelFromIstio, type LogSink, type Logger } from '../log.js';
import type { Env } from '../config/sources.js';
import type { Host } from '../config/host.js';
import { describeIgnoredInputs, loadSidecarConfig } from '../config/sidecar.js';
import type { SidecarConfig } from '../config/schema.js';
import { buildSidecarPlan } from '../model/sidecar/build.js';
import { renderIstioDryRun } from '../render/istio-framing.js';
import { renderSaveDryRun } from '../render/save.js';
import { buildProgram } from './program.js';

export interface CliDeps {
  readonly env: Env;
  readonly host: Host;
  readonly stdout: LogSink;
  readonly stderr: LogSink;
}

function dryRun(cfg: SidecarConfig, log: Logger, out: LogSink): void {
  const plan = buildSidecarPlan(cfg);
  log.info({ families: plan.families, rules: plan.rules.length, ipv6: cfg.ipv6Reason }, 'planned sidecar rules');
  const istio = renderIstioDryRun(plan);
  if (cfg.dryRunFilePath !== undefined) {
    try {
      writeFileSync(cfg.dryRunFilePath, istio);
    } catch (err) {
      throw new EnvironmentError(`cannot write DRY_RUN_FILE_PATH ${cfg.dryRunFilePath}: ${(err as Error).message}`, { cause: err });
    }
  }
  out.write(cfg.dryRunFormat === 'istio' ? istio : renderSaveDryRun(plan));
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
    if (!cfg.dryRun) {
      throw new EnvironmentError('applying rules is not available in this version; use -n/--dry-run');
    }
    dryRun(cfg, log, deps.stdout);
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

import { existsSync, writeFileSync } from 'node:fs';
import { CommanderError } from 'commander';
import { ConfigError, EnvironmentError, ExitCode, MeshcapError } from '../errors.js';
import { createLogger, levelFromIstio, type LogSink, type Logger } from '../log.js';
import type { Env } from '../config/sources.js';
import type { Host } from '../config/host.js';
import { renderIstioDryRun } from '../render/istio-framing.js';
import { renderIstioCleanupDryRun } from '../render/cleanup.js';
import { renderSaveDryRun } from '../render/save.js';
import { countingRunner, type Runner } from '../exec/runner.js';
import type { Family } from '../model/rule.js';
import { buildProgram, type ParsedCommand } from './program.js';
import { loadCommand, type Loaded } from '../commands/load.js';
import { runCheck } from './checks.js';
import { selfExecutable } from '../node/self-executable.js';

/** How long a run waits for another meshcap working on the same namespace (as iptables' --wait=30). */
const LOCK_WAIT_MS = 30_000;

export interface CliDeps {
  readonly env: Env;
  readonly host: Host;
  readonly stdout: LogSink;
  readonly stderr: LogSink;
  /** Makes the runner for a namespace (default: execa, through nsenter when --netns is set). */
  readonly makeRunner?: (netns: string | undefined) => Runner;
}

/**
 * The two dry-run texts, made on demand: Istio's (its framing, or its nft transaction) and what the kernel
 * would list (the save format needs resolved groups; Istio's text does not). The nft renderers are loaded
 * only in native mode, so istio-init's path never initialises them.
 */
async function dryRunTexts({ settings, plan, nft }: Loaded): Promise<{ istio: () => string; save: () => string }> {
  if (nft !== undefined) return (await import('../render/nft-dry-run.js')).nftDryRunTexts(plan, nft, settings.cleanupOnly);
  // After a cleanup an empty namespace holds none of our rules: the save format prints nothing.
  if (settings.cleanupOnly) return { istio: () => renderIstioCleanupDryRun(plan), save: () => '' };
  return { istio: () => renderIstioDryRun(plan, { finalSaves: settings.finalSaves }), save: () => renderSaveDryRun(plan) };
}

async function dryRun(loaded: Loaded, log: Logger, out: LogSink): Promise<void> {
  const { settings, plan, sidecar } = loaded;
  log.info({ families: plan.families, rules: plan.rules.length, ipv6: settings.ipv6Reason, backend: loaded.nft ? 'nftables' : 'iptables' }, 'planned rules');
  const texts = await dryRunTexts(loaded);
  const istio = texts.istio();
  const file = sidecar?.dryRunFilePath;
  if (file !== undefined) {
    try {
      writeFileSync(file, istio);
    } catch (err) {
      throw new EnvironmentError(`cannot write DRY_RUN_FILE_PATH ${file}: ${(err as Error).message}`, { cause: err });
    }
  }
  out.write(settings.dryRunFormat === 'istio' ? istio : texts.save());
}

async function execute({ settings, plan, sidecar, nft }: Loaded, log: Logger, deps: CliDeps): Promise<void> {
  const { netns } = settings;
  if (netns !== undefined && !existsSync(netns)) throw new EnvironmentError(`network namespace ${netns} does not exist (--netns)`);
  if (sidecar?.runValidation && netns !== undefined) {
    throw new ConfigError('--run-validation', 'true', 'validation probes the current namespace and cannot be combined with --netns; run it inside the pod');
  }
  const started = performance.now();
  // The executor (execa and friends) is loaded only when something is applied: a dry-run never parses it.
  const [{ applyLoaded, cleanupLoaded }, { createSpawnRunner }, { withNamespaceLock }, { legacyHintFromProc }] = await Promise.all([
    import('../exec/engine.js'),
    import('../exec/spawn-runner.js'),
    import('../exec/lock.js'),
    import('../exec/detect.js'),
  ]);
  const runner = countingRunner((deps.makeRunner ?? createSpawnRunner)(netns));
  // SIGTERM/SIGINT (a pod deleted mid-start) never leaves a half-applied set: the current transaction ends,
  // then everything changed is put back and meshcap exits 143.
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => interrupt.abort(signal);
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const legacyHint = (family: Family) => legacyHintFromProc(family, netns === undefined, (p) => deps.host.readText(p));
  const opts = { reconcile: settings.reconcile, forceApply: settings.forceApply, forcedBackend: settings.forceIptablesBinary, signal: interrupt.signal, legacyHint };
  const done = (msg: string, extra: object) => log.info({ ...extra, ipv6: settings.ipv6Reason, processes: runner.count(), ms: Math.round(performance.now() - started) }, msg);
  try {
    // One meshcap at a time per namespace: concurrent runs read and change the state one after another.
    // (A validation-only run, as the unprivileged proxy UID, changes nothing and takes no lock.)
    if (settings.cleanupOnly || !sidecar?.skipRuleApply) {
      await withNamespaceLock(netns, LOCK_WAIT_MS, async () => {
        if (settings.cleanupOnly) done('cleaned up', await cleanupLoaded(runner, { plan, nft }, opts, log));
        else done('applied', { ...(await applyLoaded(runner, { plan, nft }, opts, log)), rules: plan.rules.length });
      });
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  if (settings.cleanupOnly) return;
  if (sidecar?.runValidation) {
    // Loaded only here: its sockets (node:net) cost every other apply ~1 ms to load.
    const { runValidation } = await import('../exec/validate.js');
    for (const family of plan.families) {
      await runValidation({ family, outboundPort: sidecar.envoyPort, inboundPort: sidecar.inboundCapturePort, probePort: sidecar.iptablesProbePort, timeoutMs: sidecar.probeTimeout }, log);
    }
  }
}

/** Turns commander's parse failures into our one-line config errors; help is not an error. */
export function parseArgv(argv: readonly string[], deps: CliDeps): ParsedCommand | undefined {
  const { parse } = buildProgram({ out: (s) => deps.stdout.write(s), err: (s) => deps.stderr.write(s) });
  try {
    return parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return undefined;
      throw new ConfigError('command line', argv.join(' '), err.message.replace(/^error: /, ''));
    }
    throw err;
  }
}

/** The meshcap command: argv (without node and script) → exit code. Never exits the process itself. */
export async function runMeshcap(argv: readonly string[], deps: CliDeps): Promise<number> {
  if (argv[0] === 'install-cni') {
    const { runInstallCni } = await import('./install-cni.js');
    return runInstallCni(argv.slice(1), { ...deps, selfExecutable: selfExecutable() });
  }
  let log: Logger | undefined;
  try {
    const parsed = parseArgv(argv, deps);
    if (parsed === undefined) return ExitCode.ok;
    if (parsed.command === 'trace') {
      await (await import('./trace.js')).runTrace(parsed.flags, deps);
      return ExitCode.ok;
    }
    if (parsed.command === 'graph') {
      await (await import('./graph.js')).runGraph(parsed, deps);
      return ExitCode.ok;
    }
    if ('files' in parsed) return await runCheck(parsed, deps);
    const loaded = loadCommand(parsed.command, parsed.flags, deps.env, deps.host);
    const { settings } = loaded;
    log = createLogger({ level: levelFromIstio(settings.logOutputLevel), format: settings.logFormat, sink: deps.stderr }).child({ mode: parsed.command });
    for (const note of settings.notes) log.warn(note);
    if (parsed.check.json && !parsed.check.verify) throw new ConfigError('--json', 'true', 'is the output format of --verify; add --verify');
    if (parsed.check.verify) return await (await import('./verify.js')).runVerify(parsed.command, loaded, parsed.check.json, log, deps);
    if (settings.dryRun) await dryRun(loaded, log, deps.stdout);
    else await execute(loaded, log, deps);
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

import type { Server } from 'node:http';
import { Option } from 'commander';
import { ConfigError } from '../errors.js';
import { createSpawnRunner } from '../exec/spawn-runner.js';
import { parseGoBool } from '../config/values.js';
import type { Logger } from '../log.js';
import { createInstaller, installCommand, parseCommand, parseSeconds, runOneShot, runUntilSignalled, type InstallDeps, type InstallFlags } from '../node/install/command.js';
import type { Installer } from '../node/install/installer.js';
import { netConfSchema, type NetConf } from '../node/plugin-config.js';
import type { Runner } from '../exec/runner.js';
import { AgentMetrics, parseListenAddress, serveMetrics } from './metrics.js';
import { sweepNode, type SweepResult } from './sweep.js';

/**
 * `meshcap node-agent`: the DaemonSet's process. Everything `install-cni` does (same flags), plus a sweep of
 * the node's pods through the CRI at start and every `--sweep-interval`, metrics and probes. Fail closed:
 * SIGTERM/SIGINT stop the agent and LEAVE the entry and the binary (the plugin works without the agent);
 * `--uninstall` is the explicit removal.
 */

export interface NodeAgentDeps extends InstallDeps {
  /** Ends the agent (tests); SIGTERM/SIGINT do it in production. */
  readonly signal?: AbortSignal;
  readonly makeRunner?: (netns: string | undefined) => Runner;
}

interface AgentFlags extends InstallFlags {
  criSocket: string;
  sweepInterval: string;
  repair: string;
  metricsAddress: string;
}

export const DEFAULT_CRI_SOCKET = '/run/containerd/containerd.sock';

function parseFlags(argv: readonly string[], deps: NodeAgentDeps): AgentFlags | undefined {
  const cmd = installCommand('meshcap node-agent', "Keep meshcap-cni in the node's CNI chain and every enrolled pod on the node captured (the DaemonSet's process)", deps)
    .option('--cri-socket <path>', "the container runtime's CRI socket", DEFAULT_CRI_SOCKET)
    .option('--sweep-interval <seconds>', 'seconds between sweeps over the pods (one at start)', '30')
    .addOption(new Option('--repair <bool>', 'put missing or different rules back (false: observe and report only)').default('true'))
    .option('--metrics-address <host:port>', '/metrics, /healthz and /readyz', '0.0.0.0:15014');
  return parseCommand<AgentFlags>(cmd, argv);
}

/** The plugin config the agent installs, as the plugin reads it from the conflist (the same enrollment and plan as ADD). */
export function installedConf(installer: Installer): NetConf {
  return netConfSchema.parse({ cniVersion: '1.0.0', ...installer.entry });
}

const abortableSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

interface Loop {
  readonly installer: Installer;
  readonly metrics: AgentMetrics;
  readonly sweep: () => Promise<SweepResult>;
  readonly intervalMs: number;
  readonly recheckMs: number;
  readonly log: Logger;
}

/** One sweep with its logs and metrics; a runtime that cannot be asked is logged once until it answers again. */
async function sweepOnce(loop: Loop, state: { criDown: boolean }): Promise<boolean> {
  const started = performance.now();
  loop.metrics.setInstalled(loop.installer.inPlace().ok);
  try {
    const r = await loop.sweep();
    loop.metrics.recordSweep(r);
    if (state.criDown) loop.log.info({}, 'the CRI answers again');
    state.criDown = false;
    const count = (s: string) => r.pods.filter((p) => p.state === s).length;
    loop.log.info({ pods: r.pods.length, captured: count('captured'), bypassing: count('bypassing'), drifted: count('drifted'), notEnrolled: count('not-enrolled'), errors: r.errors, repairs: r.repairs, processes: r.processes, ms: Math.round(r.ms) }, 'swept');
    return true;
  } catch (err) {
    loop.metrics.recordFailedSweep(performance.now() - started);
    if (!state.criDown) loop.log.warn({ err: (err as Error).message }, 'sweep failed: the CRI cannot be asked; retrying every sweep');
    state.criDown = true;
    return false;
  }
}

/** Runs the installer's watch and the sweep loop until `stop`; leaves the entry and the binary in place. */
async function runUntilStopped(loop: Loop, address: { host: string; port: number }, stop: AbortSignal): Promise<void> {
  let swept = false;
  let lastTick = Date.now();
  let running = true;
  const server: Server = await serveMetrics(address, loop.metrics, {
    healthy: () => running && Date.now() - lastTick < 3 * loop.intervalMs + 120_000,
    ready: () => {
      const r = loop.installer.inPlace();
      if (!r.ok) return r;
      return swept ? { ok: true, why: `${r.why}; swept` } : { ok: false, why: 'the first sweep has not finished' };
    },
  });
  loop.log.info({ address: `${address.host}:${address.port}` }, 'serving /metrics, /healthz, /readyz');
  const watching = loop.installer.watch(stop, loop.recheckMs);
  const state = { criDown: false };
  try {
    while (!stop.aborted) {
      // Ready once a sweep went through (a runtime that cannot be asked keeps the agent unready, not dead).
      if (await sweepOnce(loop, state)) swept = true;
      lastTick = Date.now();
      await abortableSleep(loop.intervalMs, stop);
    }
  } finally {
    running = false;
    await watching;
    await new Promise((r) => server.close(r));
  }
}

export async function runNodeAgent(argv: readonly string[], deps: NodeAgentDeps, log: (format: 'json' | 'pretty') => Logger): Promise<number> {
  const flags = parseFlags(argv, deps);
  if (flags === undefined) return 0;
  const logger = log(flags.logFormat);
  const recheckMs = parseSeconds('--recheck-interval', flags.recheckInterval);
  const intervalMs = parseSeconds('--sweep-interval', flags.sweepInterval, 86_400);
  const repair = parseGoBool(flags.repair);
  if (!repair.ok) throw new ConfigError('--repair', flags.repair, repair.reason);
  const address = parseListenAddress(flags.metricsAddress);
  if (address === undefined) throw new ConfigError('--metrics-address', flags.metricsAddress, 'must be HOST:PORT (IPv6 as [ADDR]:PORT), port 0-65535');
  if (!flags.criSocket.startsWith('/')) throw new ConfigError('--cri-socket', flags.criSocket, 'must be an absolute path');
  const installer = createInstaller(flags, deps, logger);
  const done = runOneShot(flags, installer);
  if (done !== undefined) return done;
  const conf = installedConf(installer);
  const sweep = () => sweepNode({ criSocket: flags.criSocket, conf, host: deps.host, makeRunner: deps.makeRunner ?? createSpawnRunner, log: logger, repair: repair.value });
  const loop: Loop = { installer, metrics: new AgentMetrics(), sweep, intervalMs, recheckMs, log: logger };
  await runUntilSignalled(logger, 'stopping: meshcap-cni stays in the chain (fail closed; --uninstall removes it)', deps.signal, (stop) => runUntilStopped(loop, address, stop));
  logger.info({}, 'stopped');
  return 0;
}

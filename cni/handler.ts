import { existsSync } from 'node:fs';
import type { Host } from '../src/config/host.js';
import { CommandError, ConfigError, EnvironmentError, LockBusyError, MeshcapError } from '../src/errors.js';
import { createLogger, type LogSink, type Logger } from '../src/log.js';
import { loadCommand } from '../src/cli/commands.js';
import { applyLoaded, checkLoaded, cleanupLoaded } from '../src/exec/engine.js';
import { applyIpsets, collectIpsetGarbage } from '../src/exec/ipsets.js';
import { withNamespaceLock } from '../src/exec/lock.js';
import { legacyHintFromProc } from '../src/exec/detect.js';
import type { Family } from '../src/model/rule.js';
import type { Runner } from '../src/exec/runner.js';
import { parseCniEnv, parseNetConf, type CniEnv, type NetConf } from './config.js';
import { ambientOptions, finish, hostOptions, originOf, sidecarOptions, skipReason, type PluginOptions } from './options.js';
import { atLeast, CniCode, CniError, convertResult, isSupported, LATEST, resultAddresses, SUPPORTED_VERSIONS, type CniVersion } from './spec.js';

export interface PluginDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdin: string;
  readonly host: Host;
  readonly stderr: LogSink;
  /** Runner for a namespace; `undefined` is the plugin's own (the node's). */
  readonly makeRunner: (netns: string | undefined) => Runner;
  /** Appends a log line to the configured log_file. */
  readonly appendLog?: (path: string, line: string) => void;
}

export interface PluginOutput {
  readonly stdout: string;
  readonly exitCode: number;
}

const print = (obj: unknown) => `${JSON.stringify(obj, null, 4)}\n`;
/** How long an ADD/DEL waits for another invocation working on the same namespace. */
const LOCK_WAIT_MS = 30_000;

/** Turns an engine error into the CNI error the runtime shows, naming the config field or annotation. */
function toCniError(err: unknown, opts?: PluginOptions): CniError {
  if (err instanceof CniError) return err;
  if (err instanceof ConfigError) {
    const where = opts ? originOf(opts, err.field) : err.field;
    return new CniError(CniCode.invalidConfig, err.message.replace(err.field, where));
  }
  if (err instanceof CommandError) {
    const code = err.hint?.includes('xtables lock') ? CniCode.tryAgainLater : CniCode.applyFailed;
    return new CniError(code, err.message, err.stderr.trim() || undefined);
  }
  if (err instanceof LockBusyError) return new CniError(CniCode.tryAgainLater, err.message);
  if (err instanceof EnvironmentError || err instanceof MeshcapError) return new CniError(CniCode.environment, err.message);
  return new CniError(CniCode.internal, `internal error: ${err instanceof Error ? err.message : String(err)}`);
}

interface Invocation {
  readonly env: CniEnv;
  readonly conf: NetConf & { cniVersion: CniVersion };
  readonly log: Logger;
  readonly deps: PluginDeps;
}

const annotationsOf = (conf: NetConf) => conf.runtimeConfig?.['io.kubernetes.cri.pod-annotations'] ?? {};

function podOptions({ conf, env }: Invocation): PluginOptions {
  const builder = conf.mode === 'sidecar' ? sidecarOptions(conf, annotationsOf(conf)) : ambientOptions(conf, annotationsOf(conf));
  return finish(builder, conf.mode, conf, env.netns);
}

function skipped(inv: Invocation): string | undefined {
  return skipReason(inv.conf, annotationsOf(inv.conf), inv.env.args.get('K8S_POD_NAMESPACE') ?? '');
}

function load(inv: Invocation, opts: PluginOptions) {
  try {
    return loadCommand(opts.command, opts.flags, {}, inv.deps.host);
  } catch (err) {
    throw toCniError(err, opts);
  }
}

/** Always converge (the plugin owns the namespace it sets up); /proc tells about legacy tables of our own
 * (the node's) namespace, and for a pod's only whether the legacy module is loaded at all. */
const execOpts = (conf: NetConf, deps: PluginDeps, ownNamespace: boolean) => ({
  reconcile: true,
  forceApply: false,
  forcedBackend: conf.force_iptables_binary,
  legacyHint: (family: Family) => legacyHintFromProc(family, ownNamespace, (p) => deps.host.readText(p)),
});

/** Keeps the node's probe ipset in step with this pod's IPs (ambient, `probe_ipset: true`). */
async function syncProbeIpset(inv: Invocation, op: 'add' | 'remove'): Promise<void> {
  const { conf, env, deps } = inv;
  if (conf.mode !== 'ambient' || !conf.probe_ipset) return;
  const ips = resultAddresses(conf.prevResult).join(',');
  const opts = finish(hostOptions(conf), 'ambient-host', conf, undefined);
  opts.flags[op === 'add' ? 'addPodIp' : 'removePodIp'] = ips;
  const loaded = load(inv, opts);
  // Members carry the attachment as comment, so GC can find those whose pod is gone.
  const plan = { ...loaded.plan, ipsets: loaded.plan.ipsets.map((s) => ({ ...s, add: s.add.map((m) => ({ ...m, comment: `${env.containerId}/${env.ifname}` })) })) };
  const runner = deps.makeRunner(undefined);
  // The node's namespace is shared by every pod's ADD: one at a time there too.
  await withNamespaceLock(undefined, LOCK_WAIT_MS, async () => {
    // Native nftables changes the set elements in the same transaction as the node's rules.
    if (op === 'add' || loaded.nft !== undefined) await applyLoaded(runner, { plan, nft: loaded.nft }, execOpts(conf, deps, true), inv.log);
    else await applyIpsets(runner, plan);
  });
}

async function add(inv: Invocation): Promise<string> {
  const { conf, env, log, deps } = inv;
  if (conf.prevResult === undefined) {
    throw new CniError(CniCode.invalidConfig, 'no prevResult: meshcap-cni must be chained after a plugin that sets up the interface');
  }
  const prev = { cniVersion: conf.cniVersion, ...conf.prevResult };
  const reason = skipped(inv);
  if (reason !== undefined) {
    log.info({ reason }, 'pod passes through untouched');
  } else {
    const opts = podOptions(inv);
    const loaded = load(inv, opts);
    const report = await withNamespaceLock(env.netns, LOCK_WAIT_MS, () => applyLoaded(deps.makeRunner(env.netns), loaded, execOpts(conf, deps, false), log));
    log.info({ mode: conf.mode, ...report, container: env.containerId }, 'applied');
    await syncProbeIpset(inv, 'add');
  }
  return print(convertResult(prev, conf.cniVersion));
}

async function del(inv: Invocation): Promise<string> {
  const { conf, env, log, deps } = inv;
  if (skipped(inv) !== undefined) return '';
  await syncProbeIpset(inv, 'remove');
  if (env.netns === undefined || !existsSync(env.netns)) {
    log.info({ netns: env.netns }, 'namespace already gone: nothing to remove');
    return '';
  }
  const loaded = load(inv, podOptions(inv));
  const report = await withNamespaceLock(env.netns, LOCK_WAIT_MS, () => cleanupLoaded(deps.makeRunner(env.netns), loaded, execOpts(conf, deps, false), log));
  log.info({ mode: conf.mode, ...report }, 'removed');
  return '';
}

async function check(inv: Invocation): Promise<string> {
  const { conf, env, deps } = inv;
  if (!atLeast(conf.cniVersion, '0.4.0')) throw new CniError(CniCode.incompatibleVersion, `CHECK needs cniVersion 0.4.0 or later, got ${conf.cniVersion}`);
  if (conf.prevResult === undefined) throw new CniError(CniCode.invalidConfig, 'CHECK needs prevResult');
  if (skipped(inv) !== undefined) return '';
  if (env.netns === undefined || !existsSync(env.netns)) throw new CniError(CniCode.environment, `network namespace ${env.netns} does not exist`);
  const differences = await checkLoaded(deps.makeRunner(env.netns), load(inv, podOptions(inv)), execOpts(conf, deps, false));
  if (differences.length > 0) throw new CniError(CniCode.checkFailed, `the namespace does not hold exactly meshcap's rules: ${differences.slice(0, 3).join('; ')}`, differences.join('\n'));
  return '';
}

async function status(inv: Invocation): Promise<string> {
  const tool = inv.conf.native_nftables ? 'nft' : 'iptables-restore';
  const r = await inv.deps.makeRunner(undefined).run(tool, ['--version']);
  if (r.exitCode !== 0) throw new CniError(CniCode.notAvailable, `${tool} is not usable on this node`, r.stderr.trim() || undefined);
  return '';
}

async function gc(inv: Invocation): Promise<string> {
  const { conf, log } = inv;
  if (conf.mode !== 'ambient' || !conf.probe_ipset) return '';
  if (conf.native_nftables) {
    log.info('native nftables: probe set garbage collection is not implemented; DEL removes each pod\'s elements');
    return '';
  }
  const valid = new Set((conf['cni.dev/valid-attachments'] ?? []).map((a) => `${a.containerID}/${a.ifname}`));
  const { plan } = load(inv, finish(hostOptions(conf), 'ambient-host', conf, undefined));
  const removed = await collectIpsetGarbage(inv.deps.makeRunner(undefined), plan, valid);
  log.info({ removed: removed.length }, 'collected stale probe ipset members');
  return '';
}

function versionReply(stdin: string): string {
  let requested: unknown;
  try {
    requested = (JSON.parse(stdin || '{}') as { cniVersion?: unknown }).cniVersion;
  } catch {
    requested = undefined;
  }
  const cniVersion = typeof requested === 'string' && isSupported(requested) ? requested : LATEST;
  return `${JSON.stringify({ cniVersion, supportedVersions: SUPPORTED_VERSIONS })}\n`;
}

function makeLogger(conf: NetConf, deps: PluginDeps): Logger {
  const file = conf.log_file;
  const sink: LogSink = {
    write(chunk: string) {
      deps.stderr.write(chunk);
      if (file !== undefined) deps.appendLog?.(file, chunk);
    },
  };
  return createLogger({ level: conf.log_level, format: 'json', sink, name: 'meshcap-cni' });
}

/** One CNI invocation: env + stdin → stdout + exit code. Logs never reach stdout. */
export async function handlePlugin(deps: PluginDeps): Promise<PluginOutput> {
  let version: string = LATEST;
  try {
    const env = parseCniEnv(deps.env);
    if (env.command === 'VERSION') return { stdout: versionReply(deps.stdin), exitCode: 0 };
    const conf = parseNetConf(deps.stdin);
    version = conf.cniVersion;
    if (conf.log_file !== undefined && !conf.log_file.startsWith('/')) throw new CniError(CniCode.invalidConfig, `invalid config field "log_file": must be an absolute path`);
    const inv: Invocation = { env, conf, log: makeLogger(conf, deps).child({ command: env.command, container: env.containerId || undefined }), deps };
    try {
      const handlers = { ADD: add, DEL: del, CHECK: check, STATUS: status, GC: gc } as const;
      return { stdout: await handlers[env.command](inv), exitCode: 0 };
    } catch (err) {
      const e = toCniError(err);
      inv.log.error({ code: e.code, details: e.details }, e.message);
      throw e;
    }
  } catch (err) {
    return { stdout: print(toCniError(err).toJSON(version)), exitCode: 1 };
  }
}

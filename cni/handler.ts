import { existsSync } from 'node:fs';
import type { Logger } from '../src/log.js';
import { applyLoaded, checkLoaded } from '../src/exec/engine.js';
import { formatDriftLines } from '../src/analyze/drift.js';
import { collectIpsetGarbage } from '../src/exec/ipsets.js';
import { withNamespaceLock } from '../src/exec/lock.js';
import { hasRelativeLogFile } from '../src/node/plugin-config.js';
import { parseCniEnv, parseNetConf } from './config.js';
import { handleDel } from './delete.js';
import type { Enrollment } from '../src/node/enrollment.js';
import { judgeBypass } from '../src/config/bypass-policy.js';
import { enrollment, execOpts, load, LOCK_WAIT_MS, makeLogger, print, syncProbeIpset, toCniError, type Invocation, type PluginDeps, type PluginOutput } from './invocation.js';
import { finish, hostOptions, type PluginOptions } from '../src/node/options.js';
import { podOptions } from '../src/node/pod-plan.js';
import { atLeast, CniCode, CniError, convertResult, LATEST, versionReply } from './spec.js';

export type { PluginDeps, PluginOutput } from './invocation.js';

function podOptionsOf({ conf, env, log }: Invocation, annotations: Readonly<Record<string, string>>): PluginOptions {
  const opts = podOptions(conf, annotations, env.netns);
  for (const w of opts.warnings) log.warn({ reason: w }, 'annotation ignored');
  return opts;
}

/** An enrolled pod carrying an annotation the bypass policy denies fails before anything is read or applied. */
function enforceBypass({ conf, env }: Invocation, annotations: Readonly<Record<string, string>>): void {
  const verdict = judgeBypass(conf.bypass_policy, annotations, env.args.get('K8S_POD_NAMESPACE') ?? '');
  if (!verdict.allowed) throw new CniError(CniCode.policyDenied, verdict.reason);
}

/** Logs the decision once, with its reason, and each warning. */
function logDecision(log: Logger, e: Enrollment): void {
  for (const w of e.warnings) log.warn({ reason: w }, 'annotation ignored');
  if (e.enrolled) log.info({ reason: e.reason }, 'pod enrolled');
  else log.info({ reason: e.reason }, 'pod passes through untouched');
}

async function add(inv: Invocation): Promise<string> {
  const { conf, env, log, deps } = inv;
  if (conf.prevResult === undefined) {
    throw new CniError(CniCode.invalidConfig, 'no prevResult: meshcap-cni must be chained after a plugin that sets up the interface');
  }
  const prev = { cniVersion: conf.cniVersion, ...conf.prevResult };
  const decision = enrollment(env, conf);
  logDecision(log, decision);
  if (decision.enrolled) {
    enforceBypass(inv, decision.annotations);
    const loaded = load(inv, podOptionsOf(inv, decision.annotations));
    const report = await withNamespaceLock(env.netns, LOCK_WAIT_MS, () => applyLoaded(deps.makeRunner(env.netns), loaded, execOpts(conf, deps, false), log));
    log.info({ mode: conf.mode, ...report, container: env.containerId }, 'applied');
    await syncProbeIpset(inv, 'add');
  }
  return print(convertResult(prev, conf.cniVersion));
}

async function check(inv: Invocation): Promise<string> {
  const { conf, env, deps, log } = inv;
  if (!atLeast(conf.cniVersion, '0.4.0')) throw new CniError(CniCode.incompatibleVersion, `CHECK needs cniVersion 0.4.0 or later, got ${conf.cniVersion}`);
  if (conf.prevResult === undefined) throw new CniError(CniCode.invalidConfig, 'CHECK needs prevResult');
  const decision = enrollment(env, conf);
  if (!decision.enrolled) {
    log.info({ reason: decision.reason }, 'pod was not enrolled: nothing to check');
    return '';
  }
  enforceBypass(inv, decision.annotations);
  if (env.netns === undefined || !existsSync(env.netns)) throw new CniError(CniCode.environment, `network namespace ${env.netns} does not exist`);
  const loaded = load(inv, podOptionsOf(inv, decision.annotations));
  const differences = formatDriftLines(await checkLoaded(deps.makeRunner(env.netns), loaded, execOpts(conf, deps, false)));
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
    log.info("native nftables: probe set garbage collection is not implemented; DEL removes each pod's elements");
    return '';
  }
  const valid = new Set((conf['cni.dev/valid-attachments'] ?? []).map((a) => `${a.containerID}/${a.ifname}`));
  const { plan } = load(inv, finish(hostOptions(conf), 'ambient-host', conf, undefined));
  const removed = await collectIpsetGarbage(inv.deps.makeRunner(undefined), plan, valid);
  log.info({ removed: removed.length }, 'collected stale probe ipset members');
  return '';
}

/** One CNI invocation: env + stdin → stdout + exit code. Logs never reach stdout. */
export async function handlePlugin(deps: PluginDeps): Promise<PluginOutput> {
  let version: string = LATEST;
  try {
    const env = parseCniEnv(deps.env);
    if (env.command === 'VERSION') return { stdout: versionReply(deps.stdin), exitCode: 0 };
    if (env.command === 'DEL') return await handleDel(env, deps);
    const conf = parseNetConf(deps.stdin);
    version = conf.cniVersion;
    if (hasRelativeLogFile(conf)) throw new CniError(CniCode.invalidConfig, `invalid config field "log_file": must be an absolute path`);
    const inv: Invocation = { env, conf, log: makeLogger(conf, deps).child({ command: env.command, container: env.containerId || undefined }), deps };
    try {
      const handlers = { ADD: add, CHECK: check, STATUS: status, GC: gc } as const;
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

import { existsSync } from 'node:fs';
import { formatDriftLines } from '../src/analyze/drift.js';
import { judgeBypass } from '../src/config/bypass-policy.js';
import { applyLoaded, checkLoaded } from '../src/exec/engine.js';
import { collectIpsetGarbage } from '../src/exec/ipsets.js';
import { withNamespaceLock } from '../src/exec/lock.js';
import type { Enrollment } from '../src/node/enrollment.js';
import { finish, hostOptions, type PluginOptions } from '../src/node/options.js';
import { podOptions } from '../src/node/pod-plan.js';
import { execOpts, load, syncProbeIpset } from './engine-calls.js';
import { enrollment, LOCK_WAIT_MS, type Invocation } from './invocation.js';
import { atLeast, CniCode, CniError } from './spec.js';

/**
 * What ADD, CHECK, STATUS and GC do with the engine. The handler loads this module only when it has work for
 * it — never for VERSION or a pod that passes through — so those never evaluate the engine's graph.
 */

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

/** ADD of an enrolled pod: the bypass policy, then the apply under the namespace's lock, then the node's probe set. */
export async function applyEnrolled(inv: Invocation, decision: Extract<Enrollment, { enrolled: true }>): Promise<void> {
  const { conf, env, log, deps } = inv;
  enforceBypass(inv, decision.annotations);
  const loaded = load(inv, podOptionsOf(inv, decision.annotations));
  const report = await withNamespaceLock(env.netns, LOCK_WAIT_MS, () => applyLoaded(deps.makeRunner(env.netns), loaded, execOpts(conf, deps, false), log));
  log.info({ mode: conf.mode, ...report, container: env.containerId }, 'applied');
  await syncProbeIpset(inv, 'add');
}

export async function check(inv: Invocation): Promise<string> {
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

export async function status(inv: Invocation): Promise<string> {
  const tool = inv.conf.native_nftables ? 'nft' : 'iptables-restore';
  const r = await inv.deps.makeRunner(undefined).run(tool, ['--version']);
  if (r.exitCode !== 0) throw new CniError(CniCode.notAvailable, `${tool} is not usable on this node`, r.stderr.trim() || undefined);
  return '';
}

export async function gc(inv: Invocation): Promise<string> {
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


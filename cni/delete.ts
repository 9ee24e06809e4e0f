import { statSync } from 'node:fs';
import type { Logger } from '../src/log.js';
import { withNamespaceLock } from '../src/exec/lock.js';
import { legacyHintFromProc } from '../src/exec/detect.js';
import type { Family } from '../src/model/rule.js';
import { hasRelativeLogFile, type NetConf } from '../src/node/plugin-config.js';
import type { CniEnv } from './env.js';
import { parseNetConf } from './config.js';
import type { Enrollment } from '../src/node/enrollment.js';
import { syncProbeIpset } from './engine-calls.js';
import { enrollment, LOCK_WAIT_MS, makeLogger, toCniError, type PluginDeps, type PluginOutput } from './invocation.js';
import { ownedRouting, releaseOwned } from './release.js';
import { LATEST, print, type CniVersion } from './spec.js';

/** nsfs gives every namespace the same device: a path that is not on it is not (or no longer) a namespace. */
function isNamespace(path: string): boolean {
  try {
    return statSync(path).dev === statSync('/proc/self/ns/net').dev;
  } catch {
    return false;
  }
}

/**
 * DEL never fails because of the config or the annotations: a pod the decision skipped is a no-op; any
 * other (enrolled, undecidable, or a config that no longer parses) loses what meshcap owns in its
 * namespace, by ownership. A namespace that is gone, an empty CNI_NETNS and a repeated DEL are success.
 */
async function del(env: CniEnv, conf: (NetConf & { cniVersion: CniVersion }) | undefined, log: Logger, deps: PluginDeps): Promise<string> {
  if (conf !== undefined) {
    let decision: Enrollment | undefined;
    try {
      decision = enrollment(env, conf);
    } catch (err) {
      log.info({ reason: (err as Error).message }, 'enrollment undecidable: removing what meshcap owns');
    }
    if (decision !== undefined && !decision.enrolled) {
      log.info({ reason: decision.reason }, 'pod was not enrolled: nothing to remove');
      return '';
    }
    try {
      await syncProbeIpset({ env, conf, log, deps }, 'remove');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'probe ipset member not removed (GC removes it later)');
    }
  }
  if (env.netns === undefined || !isNamespace(env.netns)) {
    log.info({ netns: env.netns ?? '' }, 'namespace already gone: nothing to remove');
    return '';
  }
  const netns = env.netns;
  const routing = ownedRouting(conf?.mode, deps.host);
  const opts = { forcedBackend: conf?.force_iptables_binary, nativeNftables: conf?.native_nftables ?? false, legacyHint: (f: Family) => legacyHintFromProc(f, false, (p) => deps.host.readText(p)) };
  const families = await withNamespaceLock(netns, LOCK_WAIT_MS, () => releaseOwned(deps.makeRunner(netns), routing, opts, log));
  log.info({ families }, 'removed');
  return '';
}

/** DEL reads its config leniently: a config it cannot parse is logged, and the removal goes ahead by ownership. */
export async function handleDel(env: CniEnv, deps: PluginDeps): Promise<PluginOutput> {
  let conf: (NetConf & { cniVersion: CniVersion }) | undefined;
  let confError: string | undefined;
  try {
    conf = parseNetConf(deps.stdin);
    if (hasRelativeLogFile(conf)) conf = { ...conf, log_file: undefined };
  } catch (err) {
    confError = (err as Error).message;
  }
  const log = makeLogger(conf ?? { log_level: 'info', log_file: undefined }, deps).child({ command: env.command, container: env.containerId || undefined });
  if (confError !== undefined) log.warn({ reason: confError }, 'config unreadable: removing what meshcap owns');
  try {
    return { stdout: await del(env, conf, log, deps), exitCode: 0 };
  } catch (err) {
    const e = toCniError(err);
    log.error({ code: e.code, details: e.details }, e.message);
    return { stdout: print(e.toJSON(conf?.cniVersion ?? LATEST)), exitCode: 1 };
  }
}


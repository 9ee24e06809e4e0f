import { loadCommand } from '../src/commands/load.js';
import { applyLoaded } from '../src/exec/engine.js';
import { applyIpsets } from '../src/exec/ipsets.js';
import { withNamespaceLock } from '../src/exec/lock.js';
import { ConfigError } from '../src/errors.js';
import { finish, hostOptions, messageWithOrigin, type PluginOptions } from '../src/node/options.js';
import { podExecOptions } from '../src/node/pod-plan.js';
import type { NetConf } from '../src/node/plugin-config.js';
import { LOCK_WAIT_MS, toCniError, type Invocation, type PluginDeps } from './invocation.js';
import { CniCode, CniError, resultAddresses } from './spec.js';

/** The plugin's calls into the engine: a command loaded from the pod's options, the engine's options, the node's probe set. */

export function load(inv: Invocation, opts: PluginOptions) {
  try {
    return loadCommand(opts.command, opts.flags, {}, inv.deps.host);
  } catch (err) {
    throw err instanceof ConfigError ? new CniError(CniCode.invalidConfig, messageWithOrigin(err, opts)) : toCniError(err);
  }
}

/** The engine options of every pod's (and the node's) apply: see podExecOptions. */
export const execOpts = (conf: NetConf, deps: PluginDeps, ownNamespace: boolean) => podExecOptions(conf, deps.host, ownNamespace);

/** Keeps the node's probe ipset in step with this pod's IPs (ambient, `probe_ipset: true`). */
export async function syncProbeIpset(inv: Invocation, op: 'add' | 'remove'): Promise<void> {
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


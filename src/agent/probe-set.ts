import { loadCommand } from '../commands/load.js';
import { isEqual } from '../analyze/drift.js';
import type { Sandbox } from '../cri/runtime.js';
import { applyLoaded, checkLoaded } from '../exec/engine.js';
import { readIpsetMembers } from '../exec/ipsets.js';
import { withNamespaceLock } from '../exec/lock.js';
import { countingRunner } from '../exec/runner.js';
import { finish, hostOptions } from '../node/options.js';
import { podExecOptions } from '../node/pod-plan.js';
import type { SweepDeps } from './sweep.js';

/**
 * Ambient with `probe_ipset`: the node side of the enrolled pods — their addresses in the kubelet probe set
 * and the node's probe SNAT rules — as ADD leaves them (members commented `<sandbox id>/eth0`, so CNI GC
 * knows them). Read every sweep in the node's namespace; put back when missing. Native nftables keeps the
 * elements in its own table and is not checked here (ADD and DEL keep them).
 */

const NONE = { repairs: 0, errors: 0, processes: 0 };

export async function syncProbeSet(pods: readonly Sandbox[], deps: SweepDeps): Promise<typeof NONE> {
  const { conf, log } = deps;
  if (conf.mode !== 'ambient' || !conf.probe_ipset || conf.native_nftables || pods.length === 0) return NONE;
  const opts = finish(hostOptions(conf), 'ambient-host', conf, undefined);
  const members = pods.flatMap((p) => p.ips.map((ip) => ({ ip, comment: `${p.id}/eth0` })));
  if (members.length === 0) return NONE;
  opts.flags['addPodIp'] = members.map((m) => m.ip).join(',');
  const runner = countingRunner(deps.makeRunner(undefined));
  try {
    const loaded = loadCommand(opts.command, opts.flags, {}, deps.host);
    const commentOf = new Map(members.map((m) => [m.ip, m.comment]));
    const plan = { ...loaded.plan, ipsets: loaded.plan.ipsets.map((s) => ({ ...s, add: s.add.map((m) => ({ ...m, comment: commentOf.get(m.ip) ?? '' })) })) };
    const exec = podExecOptions(conf, deps.host, true);
    const repaired = await withNamespaceLock(undefined, 10_000, async () => {
      const present = new Set((await readIpsetMembers(runner)).map((m) => `${m.set} ${m.ip}`));
      const missing = plan.ipsets.flatMap((s) => s.add.filter((m) => !present.has(`${s.name} ${m.ip}`)).map((m) => m.ip));
      const rulesEqual = isEqual(await checkLoaded(runner, { plan, nft: loaded.nft }, exec));
      if (missing.length === 0 && rulesEqual) return false;
      if (!deps.repair) {
        log.warn({ missing, hostRules: rulesEqual ? 'in place' : 'differ' }, 'node probe set out of step');
        return false;
      }
      await applyLoaded(runner, { plan, nft: loaded.nft }, exec, log);
      log.info({ missing, hostRules: rulesEqual ? 'in place' : 'put back' }, 'repaired node probe set');
      return true;
    });
    return { repairs: repaired ? 1 : 0, errors: 0, processes: runner.count() };
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'node probe set check failed');
    return { repairs: 0, errors: 1, processes: runner.count() };
  }
}

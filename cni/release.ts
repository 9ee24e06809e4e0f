import type { Host } from '../src/config/host.js';
import type { Logger } from '../src/log.js';
import { loadCommand } from '../src/commands/load.js';
import { restore } from '../src/exec/apply.js';
import { detectWithHints, type LegacyHint } from '../src/exec/detect.js';
import { removeRouting } from '../src/exec/routes.js';
import type { NamespaceProbe } from '../src/exec/native.js';
import type { Runner } from '../src/exec/runner.js';
import { nftFailure } from '../src/exec/nft-apply.js';
import { renderNftCleanup } from '../src/render/nft-apply.js';
import { parseSave } from '../src/exec/state.js';
import { convergeEdits, renderEdits } from '../src/exec/transaction.js';
import type { Plan } from '../src/model/plan.js';
import type { Family } from '../src/model/rule.js';

/**
 * DEL's removal by ownership: everything meshcap owns in a pod's namespace goes — every ISTIO_* chain, every
 * rule of ours in a builtin chain (those jumping into our chains and those our ISTIO_OWNED_* record lists),
 * the native nftables tables istio-proxy-* / istio-ambient-*, and meshcap's policy routing — without reading the pod's annotations or the plugin's option values, so a
 * DEL can never fail because of them (a bad annotation that failed ADD cannot wedge the sandbox).
 */

const NOTHING: Plan = { families: [], rules: [], ipRules: [], routes: [], addresses: [], ipsets: [] };

/** meshcap's routing in a pod namespace for a mode (both when the mode is unknown), from its own defaults. */
export function ownedRouting(mode: 'sidecar' | 'ambient' | undefined, host: Host): Plan {
  const plans: Plan[] = [];
  if (mode !== 'ambient') plans.push(loadCommand('sidecar', { interceptionMode: 'TPROXY', ipv6: 'on' }, {}, host).plan);
  if (mode !== 'sidecar') plans.push(loadCommand('ambient', { ipv6: 'on' }, {}, host).plan);
  return {
    ...NOTHING,
    families: ['ipv4', 'ipv6'],
    ipRules: plans.flatMap((p) => p.ipRules),
    routes: plans.flatMap((p) => p.routes),
    addresses: plans.flatMap((p) => p.addresses),
  };
}

export interface ReleaseOptions {
  readonly forcedBackend: 'legacy' | 'nft' | undefined;
  readonly legacyHint: (family: Family) => LegacyHint;
  /** The network says native nftables: a failure to remove our tables is then an error, not a note. */
  readonly nativeNftables: boolean;
}

/**
 * Deletes the native nftables tables a pod namespace can hold of ours (sidecar's and ambient's) in one
 * transaction (`add` + `delete` of each: a table that is not there is no error). Where the network is not
 * in native mode a missing `nft` or a kernel without nf_tables only means there is nothing of ours.
 */
async function releaseNftTables(runner: Runner, opts: ReleaseOptions, log: Logger): Promise<void> {
  const r = await runner.run('nft', ['-f', '-'], { input: renderNftCleanup('sidecar') + renderNftCleanup('ambient'), ownerUserns: true });
  if (r.exitCode === 0) return;
  if (opts.nativeNftables) throw nftFailure(['-f', '-'], r);
  log.debug({ err: r.stderr.trim() }, 'no native nftables here: nothing of ours to remove');
}

/** Removes our rules from one family; 'clean' when there was nothing of ours. */
async function releaseFamily(runner: Runner, family: Family, probe: NamespaceProbe | undefined, opts: ReleaseOptions): Promise<'removed' | 'clean'> {
  const ipt = await detectWithHints(runner, family, probe, opts.forcedBackend, opts.legacyHint(family));
  const text = renderEdits(convergeEdits(NOTHING, family, parseSave(ipt.state)));
  if (text === '') return 'clean';
  await restore(runner, ipt, text);
  return 'removed';
}

/**
 * Removes what meshcap owns in the namespace the runner works in. IPv4 must succeed; an IPv6 stack that
 * cannot be read (no ip6tables, IPv6 off in the kernel) held nothing of ours and is only logged.
 */
export async function releaseOwned(runner: Runner, routing: Plan, opts: ReleaseOptions, log: Logger): Promise<Record<Family, string>> {
  const out: Record<Family, string> = { ipv4: 'clean', ipv6: 'clean' };
  await releaseNftTables(runner, opts, log);
  // One read of the namespace serves both families (the state itself changes only by our own restores).
  const probe = await runner.probe?.();
  out.ipv4 = await releaseFamily(runner, 'ipv4', probe, opts);
  try {
    out.ipv6 = await releaseFamily(runner, 'ipv6', probe, opts);
  } catch (err) {
    out.ipv6 = 'unreadable';
    log.debug({ err: (err as Error).message }, 'ipv6 rules not readable: nothing of ours there');
  }
  try {
    await removeRouting(runner, routing);
  } catch (err) {
    // `ip -6` fails where IPv6 is off; IPv4 routing is retried alone.
    await removeRouting(runner, { ...routing, families: ['ipv4'] });
    log.debug({ err: (err as Error).message }, 'ipv6 routing not readable');
  }
  return out;
}

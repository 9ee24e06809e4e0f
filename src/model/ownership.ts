import { isBuiltinChain } from './chains.js';
import { OWNED_CHAIN_PREFIX } from './names.js';
import type { Plan } from './plan.js';
import { jumpTarget, type Rule } from './rule.js';

/** The bookkeeping chain that records our rules in one builtin chain: `ISTIO_OWNED_PREROUTING`, … */
export const recordChainFor = (builtin: string) => `${OWNED_CHAIN_PREFIX}OWNED_${builtin}`;

/** A chain of ours (`ISTIO_*`), the ownership records included. */
export const isOwnedChain = (chain: string) => chain.startsWith(OWNED_CHAIN_PREFIX);

/** One of the bookkeeping chains (`ISTIO_OWNED_*`): never jumped to, never part of a packet's walk. */
export const isRecordChain = (chain: string) => chain.startsWith(recordChainFor(''));

/** A rule meshcap puts in a builtin chain that does not jump into one of its chains (`-i eth2 -j RETURN`). */
function isLookAlike(r: Rule): boolean {
  return isBuiltinChain(r.chain) && !jumpTarget(r)?.startsWith(OWNED_CHAIN_PREFIX);
}

/**
 * The rules meshcap installs: the plan's (Istio's, rendered byte for byte in Istio's format), plus, for each
 * rule it puts in a builtin chain that could pass for someone else's (an excluded interface's RETURN,
 * TPROXY's mark rules), a copy in an unreferenced `ISTIO_OWNED_<chain>` chain. The copies never see a packet;
 * they let re-apply, reconcile and cleanup tell our look-alike rules from a user's identical ones. Istio has
 * no such record and leaves a replaced config's rules behind.
 */
export function appliedRules(plan: Plan): Rule[] {
  const records = plan.rules
    .filter(isLookAlike)
    .map((r): Rule => ({ ...r, chain: recordChainFor(r.chain), op: { k: 'append' }, purpose: `record-${r.purpose}` }));
  return [...plan.rules, ...records];
}

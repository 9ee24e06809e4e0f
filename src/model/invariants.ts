import { PlanError } from '../errors.js';
import { BUILTIN_TARGETS, isBuiltinChain } from './chains.js';
import { OWNED_CHAIN_PREFIX } from './names.js';
import type { Plan } from './plan.js';

/**
 * What every plan must hold, whatever the config: we only own ISTIO_* chains and the rules we add to
 * builtin chains jump into ours or return; a rule has at most one port clause (the renderer's assumption).
 */
export function checkPlanInvariants(plan: Plan): void {
  for (const r of plan.rules) {
    if (!isBuiltinChain(r.chain) && !r.chain.startsWith(OWNED_CHAIN_PREFIX)) {
      throw new PlanError(`rule ${r.purpose} targets chain ${r.chain}, which is neither builtin nor ours`);
    }
    if (r.target.k === 'jump' && !BUILTIN_TARGETS.has(r.target.chain) && !r.target.chain.startsWith(OWNED_CHAIN_PREFIX)) {
      throw new PlanError(`rule ${r.purpose} jumps to ${r.target.chain}, which is not ours`);
    }
    if (r.match.filter((c) => c.k === 'port').length > 1) throw new PlanError(`rule ${r.purpose} has two port clauses`);
    if (r.op.k === 'insert' && r.op.position < 1) throw new PlanError(`rule ${r.purpose} inserts at ${r.op.position}`);
  }
  if (plan.families[0] !== 'ipv4' && plan.families.length > 0) throw new PlanError('IPv4 must be planned first');
}

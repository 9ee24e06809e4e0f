import { isBuiltinChain } from '../model/chains.js';
import type { Plan } from '../model/plan.js';
import { isEqual, type Drift } from './drift.js';

/**
 * What a drift means for an enrolled pod's capture (node-status, the node agent): `captured` — the namespace
 * holds exactly the rules its config installs; `bypassing` — nothing of ours steers traffic (every rule of
 * ours in a builtin chain is missing, or every native table is): the pod runs past the mesh; `drifted` —
 * some of ours are there but differ. Pure.
 */
export type CaptureState = 'captured' | 'bypassing' | 'drifted';

/** Our rules in builtin chains (the jumps that steer traffic into our chains), once per family they apply to. */
function countSteeringRules(plan: Plan): number {
  return plan.rules.filter((r) => isBuiltinChain(r.chain, r.table)).reduce((n, r) => n + (r.family === 'both' ? plan.families.length : plan.families.includes(r.family) ? 1 : 0), 0);
}

const isSteering = (text: string) => /^-A (PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /.test(text);

export function classifyCapture(drift: Drift, plan: Plan, nft: boolean): CaptureState {
  if (isEqual(drift)) return 'captured';
  if (drift.unexpected.length > 0) return 'drifted';
  if (nft) {
    const rulesDiffer = drift.missing.some((i) => i.kind === 'rule' || i.kind === 'chain');
    return !rulesDiffer && drift.missing.some((i) => i.kind === 'table') ? 'bypassing' : 'drifted';
  }
  const steering = countSteeringRules(plan);
  const missingSteering = drift.missing.filter((i) => i.kind === 'rule' && isSteering(i.text)).length;
  return steering > 0 && missingSteering >= steering ? 'bypassing' : 'drifted';
}

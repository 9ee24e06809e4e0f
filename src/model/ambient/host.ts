import type { AmbientHostConfig } from '../../config/ambient.js';
import { jump, rule, tcp } from '../clauses.js';
import { checkPlanInvariants } from '../invariants.js';
import { AmbientChain, PROBE_IPSET } from '../names.js';
import type { Plan } from '../plan.js';
import type { Family } from '../rule.js';

const POSTRT = AmbientChain.postrouting;

/**
 * The node side of ambient (istio-ambient-cni.md §5): connections the node itself opens (kubelet probes,
 * they have a local socket) to a pod in the probe ipset are SNATed to the probe address, which the pod's
 * rules accept without capture. The jump is inserted first in POSTROUTING, ahead of any masquerade. Pure.
 */
export function buildAmbientHostPlan(cfg: AmbientHostConfig): Plan {
  const families: Family[] = cfg.enableIpv6 ? ['ipv4', 'ipv6'] : ['ipv4'];
  const rules = [
    rule('nat', 'POSTROUTING', [], jump(POSTRT), 'probe-snat-jump', { insert: 1 }),
    rule(
      'nat',
      POSTRT,
      [{ k: 'socket-exists' }, tcp, { k: 'set', name: PROBE_IPSET, dir: 'dst' }],
      { k: 'snat', to: { ipv4: cfg.hostProbeSnat, ipv6: cfg.hostProbeSnatV6 } },
      'probe-snat',
    ),
  ];
  const members = (list: typeof cfg.addPodIp, family: Family) => list.filter((c) => c.family === family).map((c) => c.text);
  const plan: Plan = {
    families,
    rules,
    ipRules: [],
    routes: [],
    addresses: [],
    ipsets: families.map((family) => ({
      family,
      name: PROBE_IPSET[family],
      add: members(cfg.addPodIp, family).map((ip) => ({ ip })),
      remove: members(cfg.removePodIp, family),
    })),
    ownedChains: [POSTRT],
  };
  checkPlanInvariants(plan);
  return plan;
}

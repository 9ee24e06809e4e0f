import type { SidecarConfig } from '../../config/schema.js';
import type { Family } from '../cidr.js';
import { PassthroughSource } from '../names.js';
import type { Plan } from '../plan.js';
import { checkPlanInvariants } from '../invariants.js';
import { buildSidecarContext } from './context.js';
import { buildDnsRules } from './dns.js';
import { buildDropInvalidRules, buildInboundRules, buildInterfaceRules, buildRedirectChains, buildTproxyExtras } from './inbound.js';
import { buildOutboundCaptureRules, buildOutputHead, buildOwnerGroupRules, buildProxyOwnerRules } from './outbound.js';

/**
 * Sidecar mode: Config → Plan, in Istio's exact emission order (istio-sidecar.md §4), so that rendering the
 * rules reproduces Istio's goldens byte for byte. Pure.
 */
export function buildSidecarPlan(cfg: SidecarConfig): Plan {
  const ctx = buildSidecarContext(cfg);
  const rules = [
    ...buildInterfaceRules(ctx),
    ...buildDropInvalidRules(ctx),
    ...buildRedirectChains(ctx),
    ...buildInboundRules(ctx),
    ...buildOutputHead(ctx),
    ...buildProxyOwnerRules(ctx),
    ...buildOwnerGroupRules(ctx),
    ...buildDnsRules(ctx),
    ...buildOutboundCaptureRules(ctx),
    ...buildTproxyExtras(ctx),
  ];
  const families: Family[] = cfg.enableIpv6 ? ['ipv4', 'ipv6'] : ['ipv4'];
  const routed = ctx.tproxy && (cfg.inboundPorts === '*' || cfg.inboundPorts.length > 0);
  const plan: Plan = {
    families,
    rules,
    ipRules: routed ? families.map((family) => ({ family, mark: cfg.tproxyMark, table: cfg.tproxyRouteTable })) : [],
    routes: routed ? families.map((family) => ({ family, table: cfg.tproxyRouteTable })) : [],
    addresses: cfg.enableIpv6 ? [{ family: 'ipv6', cidr: PassthroughSource.ipv6, device: 'lo' }] : [],
    ipsets: [],
  };
  checkPlanInvariants(plan);
  return plan;
}

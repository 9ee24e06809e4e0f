import { Chain, Port } from '../names.js';
import { dport, dst, inIface, jump, notDports, outIface, owner, RETURN, rule, src, tcp, udp } from '../clauses.js';
import type { Clause, OwnerId, Rule } from '../rule.js';
import { byFamily, type SidecarContext } from './context.js';

/** Steps 8–10: the OUTPUT jump, excluded outbound ports, and the inbound-passthrough source. */
export function buildOutputHead({ cfg, passthrough }: SidecarContext): Rule[] {
  return [
    rule('nat', 'OUTPUT', [], jump(Chain.output), 'capture-outbound'),
    ...cfg.outboundExcludePorts.flatMap((p) => [
      rule('nat', Chain.output, [tcp, dport(p)], RETURN, 'skip-excluded-outbound-port'),
      rule('nat', Chain.output, [udp, dport(p)], RETURN, 'skip-excluded-outbound-port'),
    ]),
    rule('nat', Chain.output, [outIface('lo'), src(passthrough)], RETURN, 'skip-inbound-passthrough'),
  ];
}

/**
 * Steps 11–12: loop avoidance for each proxy UID, then each GID. The proxy talking to its own pod over lo goes
 * to inbound capture; other lo traffic returns; everything else the proxy sends returns.
 */
export function buildProxyOwnerRules(ctx: SidecarContext): Rule[] {
  const { cfg, lo, dns, includesLoopback } = ctx;
  const block = (kind: 'uid' | 'gid', id: OwnerId): Rule[] => {
    // Quirk Q5: only the UID rule excludes port 53 through multiport.
    const port: Clause = dns && kind === 'uid' ? notDports([Port.dns, cfg.inboundTunnelPort]) : dport(cfg.inboundTunnelPort, true);
    const out = [rule('nat', Chain.output, [outIface('lo'), dst(lo, true), tcp, port, owner(kind, id)], jump(Chain.inRedirect), 'proxy-lo-to-inbound')];
    if (!includesLoopback) {
      const lo53: Clause[] = dns ? [tcp, dport(Port.dns, true)] : [];
      out.push(rule('nat', Chain.output, [outIface('lo'), ...lo53, owner(kind, id, true)], RETURN, 'skip-app-lo'));
    }
    out.push(rule('nat', Chain.output, [owner(kind, id)], RETURN, 'skip-proxy-owner'));
    return out;
  };
  return [...cfg.proxyUids.flatMap((id) => block('uid', id)), ...cfg.proxyGids.flatMap((id) => block('gid', id))];
}

/** Step 13: owner-group filter (ISTIO_OUTBOUND_OWNER_GROUPS[_EXCLUDE]). */
export function buildOwnerGroupRules({ cfg }: SidecarContext): Rule[] {
  if (cfg.ownerGroupsInclude === '*') {
    return cfg.ownerGroupsExclude.map((g) => rule('nat', Chain.output, [owner('gid', g)], RETURN, 'skip-excluded-group'));
  }
  return [rule('nat', Chain.output, cfg.ownerGroupsInclude.map((g) => owner('gid', g, true)), RETURN, 'skip-groups-not-included')];
}

/** Steps 15–18: localhost, excluded CIDRs, included ports, included CIDRs (with kube-virt redirects, Q9). */
export function buildOutboundCaptureRules({ cfg, lo }: SidecarContext): Rule[] {
  const out: Rule[] = [rule('nat', Chain.output, [dst(lo)], RETURN, 'skip-localhost')];
  for (const c of byFamily(cfg.outboundExclude)) out.push(rule('nat', Chain.output, [dst(c)], RETURN, 'skip-excluded-cidr', { family: c.family }));
  for (const p of cfg.outboundPorts) out.push(rule('nat', Chain.output, [tcp, dport(p)], jump(Chain.redirect), 'redirect-outbound-port'));
  const include = cfg.outboundInclude;
  if (include === '*') {
    out.push(rule('nat', Chain.output, [], jump(Chain.redirect), 'redirect-outbound-all'));
    for (const iface of cfg.kubeVirtInterfaces) {
      out.push(rule('nat', 'PREROUTING', [inIface(iface)], jump(Chain.redirect), 'redirect-kube-virt', { insert: 1 }));
    }
  } else {
    for (const c of byFamily(include)) {
      for (const iface of cfg.kubeVirtInterfaces) {
        out.push(rule('nat', 'PREROUTING', [inIface(iface), dst(c)], jump(Chain.redirect), 'redirect-kube-virt-cidr', { insert: 1, family: c.family }));
      }
      out.push(rule('nat', Chain.output, [dst(c)], jump(Chain.redirect), 'redirect-outbound-cidr', { family: c.family }));
    }
  }
  return out;
}

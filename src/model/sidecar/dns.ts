import { Chain, DnsZone, Port } from '../names.js';
import { ctZone, dport, dst, jump, owner, redirectTo, rule, sport, src, tcp, udp } from '../clauses.js';
import type { Cidr } from '../cidr.js';
import type { Rule } from '../rule.js';
import type { SidecarContext } from './context.js';

/**
 * Step 14: DNS to the agent on 15053 (all port-53 traffic, or only to the nameservers), and the conntrack
 * zone split in the raw table (zone 1 agent↔upstream, zone 2 app↔agent).
 */
export function buildDnsRules({ cfg, dns, dnsV4, dnsV6 }: SidecarContext): Rule[] {
  if (!dns) return [];
  const all = cfg.captureAllDns;
  const servers = [...dnsV4, ...dnsV6];
  const fam = (s: Cidr) => ({ family: s.family });
  const out: Rule[] = [rule('raw', 'OUTPUT', [], jump(Chain.outputDns), 'dns-conntrack-zones')];
  if (all || dnsV4.length > 0) out.push(rule('nat', Chain.output, [], jump(Chain.outputDns), 'capture-dns', { family: 'ipv4' }));
  if (all || dnsV6.length > 0) out.push(rule('nat', Chain.output, [], jump(Chain.outputDns), 'capture-dns', { family: 'ipv6' }));
  for (const proto of [tcp, udp]) {
    // Quirk Q6: the UDP rule says --to-port, the TCP one --to-ports.
    const to = redirectTo(Port.dnsAgent, proto === udp ? 'to-port' : 'to-ports');
    if (all) out.push(rule('nat', Chain.outputDns, [proto, dport(Port.dns)], to, 'redirect-dns'));
    else for (const s of servers) out.push(rule('nat', Chain.outputDns, [proto, dport(Port.dns), dst(s)], to, 'redirect-dns', fam(s)));
  }
  const owners = [
    ...cfg.proxyUids.map((id) => owner('uid', id)),
    ...cfg.proxyGids.map((id) => owner('gid', id)),
  ];
  for (const o of owners) {
    out.push(rule('raw', Chain.outputDns, [udp, dport(Port.dns), o], ctZone(DnsZone.agentUpstream), 'dns-zone-agent-upstream'));
    out.push(rule('raw', Chain.outputDns, [udp, sport(Port.dnsAgent), o], ctZone(DnsZone.appAgent), 'dns-zone-agent-reply'));
  }
  if (all) {
    out.push(rule('raw', 'PREROUTING', [], jump(Chain.inbound), 'dns-zone-inbound'));
    out.push(rule('raw', Chain.outputDns, [udp, dport(Port.dns)], ctZone(DnsZone.appAgent), 'dns-zone-app'));
    out.push(rule('raw', Chain.inbound, [udp, sport(Port.dns)], ctZone(DnsZone.agentUpstream), 'dns-zone-upstream-reply'));
    return out;
  }
  for (const list of [dnsV4, dnsV6]) {
    const first = list[0];
    if (first === undefined) continue;
    out.push(rule('raw', 'PREROUTING', [], jump(Chain.inbound), 'dns-zone-inbound', fam(first)));
    for (const s of list) {
      out.push(rule('raw', Chain.outputDns, [udp, dport(Port.dns), dst(s)], ctZone(DnsZone.appAgent), 'dns-zone-app', fam(s)));
      out.push(rule('raw', Chain.inbound, [udp, sport(Port.dns), src(s)], ctZone(DnsZone.agentUpstream), 'dns-zone-upstream-reply', fam(s)));
    }
  }
  return out;
}

import type { AmbientConfig } from '../../config/ambient.js';
import { cidr } from '../cidr.js';
import { ACCEPT, ctstate, ctZone, dst, inIface, jump, outIface, redirectTo, RETURN, rule, src, tcp, udp } from '../clauses.js';
import { checkPlanInvariants } from '../invariants.js';
import { AmbientChain, AmbientMark, AmbientRouting, Loopback } from '../names.js';
import type { Plan } from '../plan.js';
import type { Clause, Family, PerFamily, Rule, Target } from '../rule.js';
import type { Cidr } from '../cidr.js';

const { prerouting: PRERT, output: OUTPUT } = AmbientChain;
const MASK = AmbientMark.mask;
/** Packets ztunnel sent (its SO_MARK), or not. */
const ztunnelMark = (not = false): Clause => ({ k: 'mark', mark: AmbientMark.ztunnel, mask: MASK, not });
const tcpMatch: Clause = { k: 'protomatch', proto: 'tcp' };
const port = (dir: 'dport' | 'sport', p: number, opts: { not?: boolean; explicit?: boolean } = {}): Clause => ({ k: 'port', dir, port: p, not: opts.not ?? false, explicit: opts.explicit ?? false });
const tproxyTo = (p: number): Target => ({ k: 'tproxy', mark: AmbientMark.connection, mask: MASK, port: p, spelling: 'ambient' });

interface Ctx {
  readonly cfg: AmbientConfig;
  readonly lo: PerFamily<Cidr>;
  readonly snat: PerFamily<Cidr>;
}

/** The jumps from the builtin chains (rules 1–6 of istio-ambient-cni.md §3). */
function buildJumps({ cfg }: Ctx): Rule[] {
  const natPrerouting = cfg.inbound === 'redirect' || cfg.virtualInterfaces.length > 0;
  return [
    rule('mangle', 'PREROUTING', [], jump(PRERT), 'ambient-mangle-prerouting'),
    rule('mangle', 'OUTPUT', [], jump(OUTPUT), 'ambient-mangle-output'),
    rule('nat', 'OUTPUT', [], jump(OUTPUT), 'ambient-nat-output'),
    ...(cfg.dns ? [rule('raw', 'PREROUTING', [], jump(PRERT), 'ambient-raw-prerouting'), rule('raw', 'OUTPUT', [], jump(OUTPUT), 'ambient-raw-output')] : []),
    ...(natPrerouting ? [rule('nat', 'PREROUTING', [], jump(PRERT), 'ambient-nat-prerouting')] : []),
  ];
}

/** Virtual interfaces (KubeVirt): their inbound TCP is sent to ztunnel's outbound port instead. */
function buildVirtualInterfaces({ cfg }: Ctx): Rule[] {
  return cfg.virtualInterfaces.flatMap((iface) => [
    rule('nat', PRERT, [inIface(iface), tcp], redirectTo(cfg.outboundPort), 'reroute-virtual-interface'),
    rule('nat', PRERT, [inIface(iface), tcp], RETURN, 'reroute-virtual-interface-done'),
  ]);
}

/** Inbound plaintext capture, Istio ≥ 1.25: nat REDIRECT to 15006; HBONE (15008) reaches ztunnel as is. */
function buildRedirectInbound({ cfg, lo }: Ctx): Rule[] {
  if (cfg.ingressMode) return [];
  return [rule('nat', PRERT, [dst(lo, true), tcp, port('dport', cfg.tunnelPort, { not: true }), ztunnelMark(true)], redirectTo(cfg.inboundPort), 'redirect-inbound-plaintext')];
}

/** The kubelet's probes arrive SNATed to the probe address (by `meshcap ambient-host`) and are not captured. */
function buildProbeAccept({ cfg, snat }: Ctx, table: 'nat' | 'mangle'): Rule[] {
  return cfg.ingressMode ? [] : [rule(table, PRERT, [src(snat), tcp, tcpMatch], ACCEPT, 'accept-kubelet-probe')];
}

/**
 * Inbound capture, Istio ≤ 1.24: mangle TPROXY of HBONE to 15008 and of plaintext to 15006 with the
 * connection mark, loopback and established connections accepted; probes accepted in mangle.
 */
function buildTproxyInbound(ctx: Ctx): Rule[] {
  const { cfg, lo } = ctx;
  const skipVirtual = cfg.virtualInterfaces.map((iface) => rule('mangle', PRERT, [inIface(iface)], RETURN, 'skip-tproxy-virtual-interface'));
  if (cfg.ingressMode) return skipVirtual;
  return [
    ...skipVirtual,
    ...buildProbeAccept(ctx, 'mangle'),
    rule('mangle', PRERT, [dst(lo, true), tcp, inIface('lo')], ACCEPT, 'accept-loopback'),
    rule('mangle', PRERT, [tcp, port('dport', cfg.tunnelPort, { explicit: true }), ztunnelMark(true)], tproxyTo(cfg.tunnelPort), 'tproxy-hbone'),
    rule('mangle', PRERT, [tcp, ctstate('RELATED', 'ESTABLISHED')], ACCEPT, 'accept-established'),
    rule('mangle', PRERT, [dst(lo, true), tcp, ztunnelMark(true)], tproxyTo(cfg.inboundPort), 'tproxy-inbound-plaintext'),
  ];
}

/** Outbound: DNS to 15053, ztunnel's connections and loopback left alone, other TCP to 15001. */
function buildOutbound({ cfg, lo }: Ctx): { dns: Rule[]; tail: Rule[] } {
  const dns = cfg.dns
    ? [
        rule('nat', OUTPUT, [outIface('lo', true), udp, ztunnelMark(true), port('dport', 53, { explicit: true })], redirectTo(cfg.dnsPort, 'to-port'), 'redirect-dns-udp'),
        rule('nat', OUTPUT, [dst(lo, true), tcp, port('dport', 53), ztunnelMark(true)], redirectTo(cfg.dnsPort), 'redirect-dns-tcp'),
        rule('raw', OUTPUT, [udp, ztunnelMark(), port('dport', 53, { explicit: true })], ctZone(1), 'dns-zone-ztunnel-upstream'),
        rule('raw', PRERT, [udp, ztunnelMark(true), port('sport', 53, { explicit: true })], ctZone(1), 'dns-zone-upstream-reply'),
      ]
    : [];
  const tail = [
    rule('nat', OUTPUT, [tcp, { k: 'mark', mark: AmbientMark.connection, mask: MASK }], ACCEPT, 'accept-ztunnel-connections'),
    rule('nat', OUTPUT, [dst(lo, true), outIface('lo')], ACCEPT, 'accept-loopback'),
    rule('nat', OUTPUT, [dst(lo, true), tcp, ztunnelMark(true)], redirectTo(cfg.outboundPort), 'redirect-outbound'),
  ];
  return { dns, tail };
}

const connmarkSet = rule('mangle', PRERT, [ztunnelMark()], { k: 'connmark-set', mark: AmbientMark.connection, mask: MASK }, 'mark-ztunnel-connections');
const connmarkRestore = rule('mangle', OUTPUT, [{ k: 'connmark', mark: AmbientMark.connection, mask: MASK }], { k: 'connmark', op: 'restore', explicitMasks: true }, 'restore-ztunnel-mark');

/**
 * Ambient in-pod redirection: Config → Plan, in the emission order of Istio's node agent, so that Istio's
 * goldens come out byte for byte (`redirect`: today's goldens; `tproxy`: the 1.24 ones). Pure.
 */
export function buildAmbientPlan(cfg: AmbientConfig): Plan {
  const ctx: Ctx = { cfg, lo: { ipv4: cidr(Loopback.ipv4), ipv6: cidr(Loopback.ipv6) }, snat: { ipv4: cfg.hostProbeSnat, ipv6: cfg.hostProbeSnatV6 } };
  const { dns, tail } = buildOutbound(ctx);
  const probeReply = rule('nat', OUTPUT, [dst(ctx.snat), tcp, tcpMatch], ACCEPT, 'accept-kubelet-probe-reply');
  const inbound = cfg.inbound === 'redirect' ? [...buildProbeAccept(ctx, 'nat'), probeReply, ...buildRedirectInbound(ctx)] : [...buildTproxyInbound(ctx), probeReply];
  const rules = [...buildJumps(ctx), ...buildVirtualInterfaces(ctx), connmarkSet, ...inbound, connmarkRestore, ...dns, ...tail];
  const families: Family[] = cfg.enableIpv6 ? ['ipv4', 'ipv6'] : ['ipv4'];
  const plan: Plan = {
    families,
    rules,
    ipRules: families.map((family) => ({ family, mark: AmbientMark.connection, mask: MASK, priority: AmbientRouting.priority, table: AmbientRouting.table })),
    routes: families.map((family) => ({ family, table: AmbientRouting.table })),
    addresses: [],
    ipsets: [],
  };
  checkPlanInvariants(plan);
  return plan;
}

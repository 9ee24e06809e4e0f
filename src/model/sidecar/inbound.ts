import { Chain, Mark } from '../names.js';
import { ACCEPT, ctstate, dport, dst, inIface, jump, outIface, redirectTo, RETURN, rule, setMark, tcp } from '../clauses.js';
import type { Clause, Rule } from '../rule.js';
import type { SidecarContext } from './context.js';

/** Steps 1–2: interfaces that are never captured, and kube-virt short circuits (inserted at 1, Q9). */
export function buildInterfaceRules({ cfg, tproxy }: SidecarContext): Rule[] {
  const out: Rule[] = [];
  const tables = tproxy ? (['nat', 'mangle'] as const) : (['nat'] as const);
  for (const table of tables) {
    for (const nic of cfg.excludeInterfaces) {
      out.push(rule(table, 'PREROUTING', [inIface(nic)], RETURN, 'skip-excluded-interface-in'));
      out.push(rule(table, 'OUTPUT', [outIface(nic)], RETURN, 'skip-excluded-interface-out'));
    }
  }
  for (const iface of cfg.kubeVirtInterfaces) {
    out.push(rule('nat', 'PREROUTING', [inIface(iface)], RETURN, 'kube-virt-short-circuit', { insert: 1 }));
  }
  return out;
}

/** Step 3: conntrack-INVALID packets are dropped (--drop-invalid). */
export function buildDropInvalidRules({ cfg }: SidecarContext): Rule[] {
  if (!cfg.dropInvalid) return [];
  return [
    rule('mangle', 'PREROUTING', [ctstate('INVALID')], jump(Chain.drop), 'drop-invalid'),
    rule('mangle', Chain.drop, [], jump('DROP'), 'drop-invalid'),
  ];
}

/** Steps 4–6: the tunnel-port exemption and the two REDIRECT chains. */
export function buildRedirectChains({ cfg }: SidecarContext): Rule[] {
  return [
    rule('nat', Chain.inbound, [tcp, dport(cfg.inboundTunnelPort)], RETURN, 'skip-tunnel-port'),
    rule('nat', Chain.redirect, [tcp], redirectTo(cfg.envoyPort), 'redirect-outbound'),
    rule('nat', Chain.inRedirect, [tcp], redirectTo(cfg.inboundCapturePort), 'redirect-inbound'),
  ];
}

/** Step 7: inbound capture, REDIRECT (nat) or TPROXY (mangle), for all ports or a list. */
export function buildInboundRules({ cfg, tproxy, lo }: SidecarContext): Rule[] {
  const ports = cfg.inboundPorts;
  if (ports !== '*' && ports.length === 0) return [];
  const out: Rule[] = [];
  const table = tproxy ? 'mangle' : 'nat';
  if (tproxy) {
    out.push(rule('mangle', Chain.divert, [], setMark(cfg.tproxyMark), 'tproxy-mark-established'));
    out.push(rule('mangle', Chain.divert, [], ACCEPT, 'tproxy-accept-established'));
    out.push(rule('mangle', Chain.tproxy, [dst(lo, true), tcp], { k: 'tproxy', mark: cfg.tproxyMark, mask: Mark.full, port: cfg.inboundCapturePort }, 'tproxy-inbound'));
  }
  out.push(rule(table, 'PREROUTING', [tcp], jump(Chain.inbound), 'capture-inbound'));
  const divert = (match: Clause[]) => rule('mangle', Chain.inbound, [...match, ctstate('RELATED', 'ESTABLISHED')], jump(Chain.divert), 'tproxy-divert-established');
  if (ports === '*') {
    for (const p of cfg.inboundExcludePorts) out.push(rule(table, Chain.inbound, [tcp, dport(p)], RETURN, 'skip-excluded-inbound-port'));
    if (tproxy) {
      out.push(divert([tcp]));
      out.push(rule('mangle', Chain.inbound, [tcp], jump(Chain.tproxy), 'tproxy-inbound'));
    } else {
      out.push(rule('nat', Chain.inbound, [tcp], jump(Chain.inRedirect), 'redirect-inbound'));
    }
  } else {
    for (const p of ports) {
      if (tproxy) {
        out.push(divert([tcp, dport(p)]));
        out.push(rule('mangle', Chain.inbound, [tcp, dport(p)], jump(Chain.tproxy), 'tproxy-inbound-port'));
      } else {
        out.push(rule('nat', Chain.inbound, [tcp, dport(p)], jump(Chain.inRedirect), 'redirect-inbound-port'));
      }
    }
  }
  return out;
}

/** Step 19: TPROXY's mark plumbing, emitted whenever the mode is TPROXY (even with no inbound ports). */
export function buildTproxyExtras({ cfg, tproxy, lo, passthrough }: SidecarContext): Rule[] {
  if (!tproxy) return [];
  const t = cfg.tproxyMark;
  const owners = [
    ...cfg.proxyUids.map((id) => ({ kind: 'uid' as const, id })),
    ...cfg.proxyGids.map((id) => ({ kind: 'gid' as const, id })),
  ];
  return [
    rule('mangle', 'PREROUTING', [tcp, { k: 'mark', mark: t }], { k: 'connmark', op: 'save' }, 'tproxy-save-mark'),
    rule('mangle', 'OUTPUT', [tcp, outIface('lo'), { k: 'mark', mark: t }], RETURN, 'tproxy-skip-marked-lo'),
    ...owners.map(({ kind, id }) =>
      rule('mangle', 'OUTPUT', [dst(lo, true), tcp, outIface('lo'), { k: 'owner', kind, id }], setMark(Mark.tproxyOutbound), 'tproxy-mark-proxy-lo'),
    ),
    rule('mangle', 'OUTPUT', [tcp, { k: 'connmark', mark: t }], { k: 'connmark', op: 'restore' }, 'tproxy-restore-mark'),
    rule('mangle', Chain.inbound, [tcp, { k: 'mark', mark: t }], RETURN, 'tproxy-skip-marked', { insert: 1 }),
    rule('mangle', Chain.inbound, [tcp, { k: 'src', addr: passthrough }, inIface('lo')], RETURN, 'tproxy-skip-passthrough', { insert: 2 }),
    rule('mangle', Chain.inbound, [tcp, inIface('lo'), { k: 'mark', mark: Mark.tproxyOutbound, not: true }], RETURN, 'tproxy-skip-lo-unmarked', { insert: 3 }),
  ];
}

import type { SidecarConfig } from '../../config/schema.js';
import { cidr, isLoopbackCidr, type Cidr } from '../cidr.js';
import { Loopback, PassthroughSource } from '../names.js';
import type { PerFamily } from '../rule.js';

/** Values derived once from the config and shared by the sidecar rule builders. */
export interface SidecarContext {
  readonly cfg: SidecarConfig;
  /** Istio's "localhost" per family: the (configurable) IPv4 loopback CIDR and ::1/128. */
  readonly lo: PerFamily<Cidr>;
  /** Inbound passthrough source per family: 127.0.0.6/32 and ::6/128. */
  readonly passthrough: PerFamily<Cidr>;
  readonly tproxy: boolean;
  /** DNS capture is on: --redirect-dns, and capture-all or at least one nameserver (Istio quirk Q7). */
  readonly dns: boolean;
  readonly dnsV4: readonly Cidr[];
  readonly dnsV6: readonly Cidr[];
  /** `-i` holds a loopback CIDR in either family (drops the `! --uid-owner` lo RETURNs, Q8). */
  readonly includesLoopback: boolean;
}

export function buildSidecarContext(cfg: SidecarConfig): SidecarContext {
  const dnsV4 = cfg.dnsServers.filter((s) => s.family === 'ipv4');
  const dnsV6 = cfg.dnsServers.filter((s) => s.family === 'ipv6');
  return {
    cfg,
    lo: { ipv4: cfg.ipv4LoopbackCidr, ipv6: cidr(Loopback.ipv6) },
    passthrough: { ipv4: cidr(PassthroughSource.ipv4), ipv6: cidr(PassthroughSource.ipv6) },
    tproxy: cfg.interceptionMode === 'TPROXY',
    dns: cfg.redirectDns && (cfg.captureAllDns || dnsV4.length > 0 || dnsV6.length > 0),
    dnsV4,
    dnsV6,
    includesLoopback: cfg.outboundInclude !== '*' && cfg.outboundInclude.some(isLoopbackCidr),
  };
}

/** CIDRs of one list, IPv4 ones first then IPv6 ones (Istio handles the families one after the other). */
export function byFamily(list: readonly Cidr[]): Cidr[] {
  return [...list.filter((c) => c.family === 'ipv4'), ...list.filter((c) => c.family === 'ipv6')];
}

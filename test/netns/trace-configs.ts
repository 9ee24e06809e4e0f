/**
 * Seeded random configs and flows for the trace differential suite. Same seed, same configs and flows: a
 * failing run is replayed with TRACE_SEED=<seed>.
 */
import { ADDR } from '../helpers/topology.js';

export type Rng = () => number;

/** mulberry32: small, seedable, good enough to pick test cases. */
export function makeRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)] as T;
const chance = (rng: Rng, p: number) => rng() < p;
const subset = <T>(rng: Rng, list: readonly T[]): T[] => list.filter(() => chance(rng, 0.5));

/** Ports the app (pod) and the peer listen on; the capture listeners take 15001/15006/15008/15053 (DNS over TCP). */
export const APP_PORTS = [53, 80, 443, 3306, 8080, 9000, 15020, 15021, 15090] as const;
export const CAPTURE_PORTS = [15001, 15006, 15008, 15053] as const;
export const FLOW_PORTS = [...APP_PORTS, 15008] as const;

export interface TraceConfig {
  readonly title: string;
  readonly args: readonly string[];
  readonly ipv6: boolean;
  readonly ambient: boolean;
}

/** A sidecar config: REDIRECT or TPROXY, IPv6 or not, -i/-x CIDRs, -b/-d, -q/-o, -u/-g, DNS capture or not. */
export function randomSidecar(rng: Rng): TraceConfig {
  const tproxy = chance(rng, 0.5);
  const ipv6 = chance(rng, 0.5);
  const include = pick(rng, ['*', '*', 'list', '']);
  const includeList = subset(rng, ['203.0.113.0/24', '192.0.2.0/24', ...(ipv6 ? ['2001:db8:2::/48', '2001:db8:3::/48'] : [])]);
  const exclude = subset(rng, ['203.0.113.200/32', '192.0.2.0/24', ...(ipv6 ? ['2001:db8:3::/48'] : [])]);
  const inbound = pick(rng, ['*', '*', 'list', '']);
  const inboundList = subset(rng, [80, 8080, 9000, 3306]);
  const args = [
    '-p', '15001', '-z', '15006',
    '-u', pick(rng, ['1337', '1337', '1337,2000']),
    '-g', pick(rng, ['1337', '']),
    '-m', tproxy ? 'TPROXY' : 'REDIRECT',
    '-i', include === 'list' ? includeList.join(',') : include,
    '-x', exclude.join(','),
    '-b', inbound === 'list' ? inboundList.join(',') : inbound,
    '-d', subset(rng, [15020, 15021, 15090, 8080]).join(','),
    '-q', subset(rng, [443, 3306]).join(','),
    '-o', subset(rng, [3306, 9000]).join(','),
    ...pick(rng, [[], [], ['--redirect-dns', '--dns-servers', ipv6 ? `${ADDR.otherV4},${ADDR.otherV6}` : ADDR.otherV4], ['--redirect-dns', '--capture-all-dns', '--resolv-conf', '/dev/null']]),
    '--ipv6', ipv6 ? 'on' : 'off',
  ];
  return { title: `sidecar ${args.join(' ')}`, args, ipv6, ambient: false };
}

/** An ambient config: today's REDIRECT layout or 1.24's TPROXY one, IPv6 or not, DNS capture or not. */
export function randomAmbient(rng: Rng): TraceConfig {
  const ipv6 = chance(rng, 0.5);
  const args = ['ambient', '--inbound', pick(rng, ['redirect', 'tproxy']), pick(rng, ['--redirect-dns=false', '--redirect-dns']), '--ipv6', ipv6 ? 'on' : 'off'];
  return { title: args.join(' '), args, ipv6, ambient: true };
}

/** An ambient config in native nftables mode: nft has only the redirect layout. */
export function randomNftAmbient(rng: Rng): TraceConfig {
  const ipv6 = chance(rng, 0.5);
  const args = ['ambient', '--inbound', 'redirect', pick(rng, ['--redirect-dns=false', '--redirect-dns']), '--ipv6', ipv6 ? 'on' : 'off'];
  return { title: args.join(' '), args, ipv6, ambient: true };
}

/** Who opens an outbound connection: uid, gid, socket mark, and a source to bind (Envoy's passthrough). */
export interface Sender {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  readonly mark: number;
  readonly bind?: { readonly ipv4: string; readonly ipv6: string };
}

export const SENDERS: Record<string, Sender> = {
  app: { name: 'app', uid: 1000, gid: 1000, mark: 0 },
  proxy: { name: 'proxy', uid: 1337, gid: 1337, mark: 0 },
  proxyGroup: { name: 'app in the proxy group', uid: 1000, gid: 1337, mark: 0 },
  passthrough: { name: 'proxy passthrough', uid: 1337, gid: 1337, mark: 0, bind: { ipv4: '127.0.0.6', ipv6: '::6' } },
  ztunnel: { name: 'ztunnel (SO_MARK 0x539)', uid: 0, gid: 0, mark: 0x539 },
};

export interface TraceFlowCase {
  readonly direction: 'outbound' | 'inbound';
  readonly family: 'ipv4' | 'ipv6';
  readonly sender: Sender;
  readonly dst: string;
  readonly dport: number;
  /** The destination is this pod's own address (or loopback): the connection stays in the pod. */
  readonly local: boolean;
}

const DESTS: Record<'ipv4' | 'ipv6', readonly { readonly addr: string; readonly local: boolean }[]> = {
  ipv4: [
    { addr: ADDR.remoteV4, local: false },
    { addr: ADDR.remoteV4Excluded, local: false },
    { addr: ADDR.otherV4, local: false },
    { addr: ADDR.peerV4, local: false },
    { addr: ADDR.podV4, local: true },
    { addr: '127.0.0.1', local: true },
  ],
  ipv6: [
    { addr: ADDR.remoteV6, local: false },
    { addr: ADDR.otherV6, local: false },
    { addr: ADDR.peerV6, local: false },
    { addr: ADDR.podV6, local: true },
    { addr: '::1', local: true },
  ],
};

/** `count` flows for a config: outbound from several senders to near, far and local addresses; inbound from the peer. */
export function randomFlows(rng: Rng, cfg: TraceConfig, count: number): TraceFlowCase[] {
  const families = cfg.ipv6 ? (['ipv4', 'ipv6'] as const) : (['ipv4'] as const);
  const senders = cfg.ambient ? [SENDERS.app, SENDERS.proxy, SENDERS.ztunnel] : [SENDERS.app, SENDERS.proxy, SENDERS.proxyGroup, SENDERS.passthrough];
  const out: TraceFlowCase[] = [];
  for (let i = 0; i < count; i++) {
    const family = pick(rng, families);
    const dport = pick(rng, FLOW_PORTS);
    if (chance(rng, 0.3)) {
      out.push({ direction: 'inbound', family, sender: SENDERS.app as Sender, dst: family === 'ipv4' ? ADDR.podV4 : ADDR.podV6, dport, local: true });
      continue;
    }
    const sender = pick(rng, senders) as Sender;
    // Envoy's passthrough source only ever talks to the pod's own address.
    const dests = sender.bind ? DESTS[family].filter((d) => d.addr === ADDR.podV4 || d.addr === ADDR.podV6) : DESTS[family];
    const d = pick(rng, dests);
    out.push({ direction: 'outbound', family, sender, dst: d.addr, dport, local: d.local });
  }
  return out;
}

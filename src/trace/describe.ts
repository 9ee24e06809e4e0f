import type { Packet } from './packet.js';
import type { Step, TraceResult, Verdict } from './result.js';

/** What listens on meshcap's ports, by layout. */
const PORT_NAMES = {
  sidecar: { 15001: 'Envoy outbound', 15006: 'Envoy inbound', 15008: 'tunnel (HBONE)', 15053: 'DNS agent' },
  ambient: { 15001: 'ztunnel outbound', 15006: 'ztunnel inbound plaintext', 15008: 'ztunnel inbound HBONE', 15053: 'ztunnel DNS proxy' },
} as const;

export type Layout = keyof typeof PORT_NAMES;

function portName(port: number, layout: Layout): string {
  const names: Record<number, string> = PORT_NAMES[layout];
  return names[port] ?? 'capture port';
}

/** Why a packet left our rules uncaptured, from the purpose of the rule that let it go. */
function reasonOf(step: Step | undefined, p: Packet): string {
  const owner = p.owner;
  switch (step?.purpose) {
    case 'skip-proxy-owner':
      return /--gid-owner|meta skgid /.test(step.rule) ? `gid ${owner?.gid ?? '?'} is the proxy's group` : `uid ${owner?.uid ?? '?'} is the proxy`;
    case 'skip-localhost':
      return 'the destination is localhost';
    case 'skip-app-lo':
      return "an app's own loopback traffic";
    case 'skip-inbound-passthrough':
      return "the proxy's inbound passthrough (source 127.0.0.6 / ::6)";
    case 'skip-excluded-cidr':
      return 'the destination is in an excluded CIDR (-x)';
    case 'skip-excluded-outbound-port':
      return `port ${p.dport} is excluded from outbound capture (-o)`;
    case 'skip-excluded-inbound-port':
      return `port ${p.dport} is excluded from inbound capture (-d)`;
    case 'skip-tunnel-port':
      return `port ${p.dport} is the tunnel port`;
    case 'skip-excluded-group':
    case 'skip-groups-not-included':
      return 'the sender\'s group is not captured';
    case 'skip-excluded-interface-in':
    case 'skip-excluded-interface-out':
      return 'the interface is excluded (-c)';
    case 'accept-ztunnel-connections':
      return "the connection is ztunnel's (connection mark 0x111)";
    case 'accept-loopback':
      return 'loopback traffic';
    case 'accept-kubelet-probe':
    case 'accept-kubelet-probe-reply':
      return 'a kubelet probe (SNAT address)';
    default:
      return step === undefined ? 'no rule captured it' : `${step.table} ${step.chain} let it go (${step.rule})`;
  }
}

/** A rule that lets the packet go: iptables' `-j RETURN|ACCEPT`, nft's `return|accept`. */
const LETS_GO = /(-j (RETURN|ACCEPT)| ?\b(return|accept))$/;

/** The verdict in words: `redirected to local port 15001 (Envoy outbound)`, `passes uncaptured: uid 1337 is the proxy`. */
export function describeVerdict(result: TraceResult, packet: Packet, layout: Layout): string {
  const v: Verdict = result.verdict;
  switch (v.k) {
    case 'redirect':
      return `redirected to local port ${v.port} (${portName(v.port, layout)})`;
    case 'tproxy':
      return `sent to local port ${v.port} through TPROXY (${portName(v.port, layout)})`;
    case 'pass':
      if (v.to !== undefined) return `passes, DNATed to ${v.to}`;
      return `passes uncaptured: ${reasonOf([...result.path].reverse().find((s) => s.purpose !== undefined && LETS_GO.test(s.rule)) ?? [...result.path].reverse().find((s) => LETS_GO.test(s.rule)), packet)}`;
    case 'drop':
      return `dropped by ${result.path[result.path.length - 1]?.rule ?? 'a policy'}`;
    case 'unknown':
      return `unknown: ${v.table} ${v.chain}: ${v.rule || '(no rule)'}: ${v.reason}`;
  }
}

/** Human output: one line per rule that matched or decided, then the verdict. */
export function formatTrace(result: TraceResult, packet: Packet, layout: Layout, header: string): string {
  const width = Math.max(0, ...result.path.map((s) => `${s.table} ${s.chain}`.length));
  const lines = result.path.map((s) => `  ${`${s.table} ${s.chain}`.padEnd(width)}  ${s.rule}${s.purpose === undefined ? '' : `   [${s.purpose}]`}`);
  return `${[header, ...lines, `verdict: ${describeVerdict(result, packet, layout)}`].join('\n')}\n`;
}

/** `--json`: exactly `{verdict, port (redirect/tproxy only), family, path}`; an unknown verdict's rule is the path's last entry. */
export function formatTraceJson(result: TraceResult): string {
  const v = result.verdict;
  const out = {
    verdict: v.k,
    ...(v.k === 'redirect' || v.k === 'tproxy' ? { port: v.port } : {}),
    family: result.family,
    path: result.path.map((s) => ({ table: s.table, chain: s.chain, rule: s.rule })),
  };
  return `${JSON.stringify(out)}\n`;
}

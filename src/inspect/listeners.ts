import ipaddr from 'ipaddr.js';
import type { Runner } from '../exec/runner.js';
import type { Family } from '../model/rule.js';

/** A bound socket of a namespace: a TCP listener or a bound UDP socket, with its owner. */
export interface Listener {
  readonly protocol: 'tcp' | 'udp';
  readonly family: Family;
  /** The bound address as text (`0.0.0.0`, `127.0.0.1`, `::`, `::1`). */
  readonly address: string;
  readonly port: number;
  readonly uid: number;
  /** The socket's inode (matches `socket:[inode]` in /proc/<pid>/fd). */
  readonly inode: number;
}

const TCP_LISTEN = '0A';
const UDP_UNCONNECTED = '07';

/** /proc/net's hex address: 32-bit words in host (little-endian) byte order. */
function decodeAddress(hex: string): { family: Family; address: string } | undefined {
  if (!/^[0-9A-Fa-f]+$/.test(hex) || (hex.length !== 8 && hex.length !== 32)) return undefined;
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = hex.slice(w, w + 8);
    for (let b = 6; b >= 0; b -= 2) bytes.push(parseInt(word.slice(b, b + 2), 16));
  }
  if (bytes.length === 4) return { family: 'ipv4', address: bytes.join('.') };
  return { family: 'ipv6', address: ipaddr.fromByteArray(bytes).toString() };
}

/**
 * Parses the concatenation of /proc/net/{tcp,tcp6,udp,udp6}: each file starts with its header line; TCP's
 * LISTEN sockets and UDP's bound, unconnected ones are kept.
 */
export function parseProcNet(text: string): Listener[] {
  const out: Listener[] = [];
  let protocol: 'tcp' | 'udp' | undefined;
  for (const line of text.split('\n')) {
    if (line.includes('local_address')) {
      // UDP's header ends with "ref pointer drops"; TCP's does not.
      protocol = line.includes('drops') ? 'udp' : 'tcp';
      continue;
    }
    const f = line.trim().split(/\s+/);
    if (protocol === undefined || f.length < 10) continue;
    const [, local = '', , state = '', , , , uid = '', , inode = ''] = f;
    if (state !== (protocol === 'tcp' ? TCP_LISTEN : UDP_UNCONNECTED)) continue;
    const [addrHex = '', portHex = ''] = local.split(':');
    const addr = decodeAddress(addrHex);
    if (addr === undefined || !/^[0-9A-Fa-f]{4}$/.test(portHex) || !/^\d+$/.test(uid) || !/^\d+$/.test(inode)) continue;
    out.push({ protocol, ...addr, port: parseInt(portHex, 16), uid: Number(uid), inode: Number(inode) });
  }
  return out;
}

/**
 * The namespace's listeners: /proc/self/net/* read by a process inside the namespace (the runner's), so it
 * works from the node (`--netns`) as from a debug container. A family without its file (IPv6 disabled) is
 * simply absent.
 */
export async function readListeners(runner: Runner): Promise<Listener[]> {
  const files = ['tcp', 'tcp6', 'udp', 'udp6'].map((f) => `/proc/self/net/${f}`);
  // Read from the pod's user namespace: the socket owners are then the pod's UIDs, as its rules name them.
  const r = await runner.run('cat', files, { ownerUserns: true });
  return parseProcNet(r.stdout);
}

/** What a bound address reaches: only the namespace itself (loopback), every address (wildcard), or one address. */
export function addressScope(address: string): 'loopback' | 'wildcard' | 'specific' {
  if (!ipaddr.isValid(address)) return 'specific';
  let a = ipaddr.parse(address);
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
  const range = a.range();
  return range === 'loopback' ? 'loopback' : range === 'unspecified' ? 'wildcard' : 'specific';
}

import type { Cidr, Family } from '../model/cidr.js';

/** A set's members as `ipset save` lists them (addresses or networks of one family). */
export type SetMembers = ReadonlyMap<string, readonly Cidr[]>;

/** The first packet of a new connection, as the walk sees it; the walk returns changed copies. */
export interface Packet {
  readonly family: Family;
  readonly proto: 'tcp' | 'udp';
  /** Undefined: an address that no source match names (`-s X` is false, `! -s X` true). */
  readonly src: readonly number[] | undefined;
  readonly dst: readonly number[];
  readonly sport: number | undefined;
  readonly dport: number;
  /** The sending socket's owner (outbound only). */
  readonly owner: { readonly uid: number; readonly gid: number } | undefined;
  readonly mark: number;
  readonly ctmark: number;
  /** The devices of the hook being walked ('' when the hook has none). */
  readonly inIface: string;
  readonly outIface: string;
  /** Conntrack status bits beyond NEW that nat set on this connection. */
  readonly natted: { readonly dnat: boolean; readonly snat: boolean };
  /** nft's `notrack` ran: no nat chain sees the packet. */
  readonly untracked?: boolean;
}

/** What the walk may read besides the packet: ipset members, when the sets could be read. */
export interface TraceEnv {
  readonly sets: SetMembers | undefined;
}

export function inCidr(addr: readonly number[], c: Cidr): boolean {
  if (addr.length !== c.bytes.length) return false;
  for (let bit = 0; bit < c.prefix; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((addr[byte] ?? 0) & mask) !== ((c.bytes[byte] ?? 0) & mask)) return false;
  }
  return true;
}

export const LOOPBACK = { ipv4: [127, 0, 0, 1], ipv6: [...Array<number>(15).fill(0), 1] } as const;

import type { Cidr } from '../model/cidr.js';
import type { Family, OwnerId, Proto } from '../model/rule.js';
import { formatAddress } from './inet.js';

/**
 * One piece of an nft rule in two spellings: Istio's (what its nft builder writes into the transaction)
 * and the kernel's (what `nft -s list ruleset` prints back, nft 1.0.6; istio-nftables.md §9).
 */
export interface NftWord {
  readonly istio: string;
  readonly kernel: string;
  /** `meta l4proto tcp`: the kernel listing drops it when a tcp header match follows. */
  readonly l4?: boolean;
  /** A `tcp dport|sport` match. */
  readonly tcpHeader?: boolean;
  /** The word only exists in one family's rule (`ip daddr`, `tproxy ip6 to`). */
  readonly family?: Family;
  /**
   * meshcap's own applied transaction, where it must differ from Istio's text: interface names are quoted,
   * so an interface named like an nft keyword (`xt`, `ip`, `vlan`) can neither break nor change it.
   */
  readonly applied?: string;
}

const same = (text: string): NftWord => ({ istio: text, kernel: text });
const neg = (not: boolean | undefined) => (not ? '!= ' : '');
/** Marks as nft lists them: 32-bit hex, zero-padded. */
export const hex8 = (n: number) => `0x${(n >>> 0).toString(16).padStart(8, '0')}`;
const hex = (n: number) => `0x${(n >>> 0).toString(16)}`;
const ipKeyword = (f: Family) => (f === 'ipv4' ? 'ip' : 'ip6');

export const COUNTER = same('counter');
export const l4 = (proto: Proto): NftWord => ({ istio: `meta l4proto ${proto}`, kernel: `meta l4proto ${proto}`, l4: true });
export const verdict = (v: string): NftWord => same(v);

export function iface(dir: 'in' | 'out', name: string, not?: boolean): NftWord {
  const key = dir === 'in' ? 'iifname' : 'oifname';
  return { istio: `${key} ${neg(not)}${name}`, kernel: `${key} ${neg(not)}"${name}"`, applied: `${key} ${neg(not)}"${name}"` };
}

/** A prefix as nft prints it: host bits cleared, no length for a single address. */
export function kernelPrefix(c: Cidr): string {
  const full = c.family === 'ipv4' ? 32 : 128;
  return c.prefix === full ? formatAddress(c.bytes) : `${formatAddress(c.bytes)}/${c.prefix}`;
}

export function addr(dir: 'saddr' | 'daddr', c: Cidr, not?: boolean): NftWord {
  const key = `${ipKeyword(c.family)} ${dir} ${neg(not)}`;
  return { istio: key + c.text, kernel: key + kernelPrefix(c), family: c.family };
}

export function addrSet(family: Family, set: string): NftWord {
  return { ...same(`${ipKeyword(family)} daddr @${set}`), family };
}

export function ports(proto: Proto, dir: 'dport' | 'sport', list: readonly number[], not?: boolean): NftWord {
  const one = (l: readonly number[]) => (l.length === 1 ? String(l[0]) : `{ ${l.join(', ')} }`);
  const sorted = [...list].sort((a, b) => a - b);
  const key = `${proto} ${dir} ${neg(not)}`;
  return { istio: key + one(list), kernel: key + one(sorted), tcpHeader: proto === 'tcp' };
}

export function owner(kind: 'uid' | 'gid', id: OwnerId, opts: { not?: boolean; meta?: boolean } = {}): NftWord {
  const key = `sk${kind} ${neg(opts.not)}`;
  // A group name is resolved when the config loads, except for Istio's dry-run text, which needs none.
  return { istio: `${opts.meta ? 'meta ' : ''}${key}${id.text}`, kernel: `meta ${key}${id.id ?? id.text}` };
}

/** Sidecar marks: decimal in Istio's text (`mark 1337`, `mark != 1338`). */
export function mark(value: number, not?: boolean): NftWord {
  return { istio: `mark ${neg(not)}${value}`, kernel: `meta mark ${neg(not)}${hex8(value)}` };
}

export function ctMark(value: number): NftWord {
  return { istio: `ct mark ${value}`, kernel: `ct mark ${hex8(value)}` };
}

/** A masked mark compare in one of Istio's ambient spellings (`mark and 0xfff != 0x539`, `meta mark & …`). */
export function maskedMark(what: 'mark' | 'meta mark and' | 'meta mark &' | 'ct mark and', value: number, mask: number, opts: { not?: boolean; gap?: string } = {}): NftWord {
  const op = opts.not ? '!=' : '==';
  const kernelKey = what === 'ct mark and' ? 'ct mark' : 'meta mark';
  const istio = what === 'mark' ? `mark and ${hex(mask)}${opts.gap ?? ' '}${op} ${hex(value)}` : `${what} ${hex(mask)} ${op} ${hex(value)}`;
  return { istio, kernel: `${kernelKey} & ${hex8(mask)} ${op} ${hex8(value)}` };
}

const CT_STATE_BITS = ['invalid', 'established', 'related', 'new', 'untracked'];
export function ctState(states: readonly string[]): NftWord {
  const lower = states.map((s) => s.toLowerCase());
  const sorted = [...lower].sort((a, b) => CT_STATE_BITS.indexOf(a) - CT_STATE_BITS.indexOf(b));
  return { istio: `ct state ${lower.join(',')}`, kernel: `ct state ${sorted.join(',')}` };
}

export const redirectTo = (port: number) => same(`redirect to :${port}`);
export const tproxyTo = (family: Family, port: number): NftWord => ({ ...same(`tproxy ${ipKeyword(family)} to :${port}`), family });
export const setMark = (value: number): NftWord => ({ istio: `meta mark set ${value}`, kernel: `meta mark set ${hex8(value)}` });
export const saveMark: NftWord = { istio: 'ct mark set mark', kernel: 'ct mark set meta mark' };
export const restoreMark = same('meta mark set ct mark');
export const ctZone = (zone: number) => same(`ct zone set ${zone}`);

/** `ct mark set ct mark & ~mask | mark` as Istio spells it; the kernel keeps one mask/xor pair. */
export function setConnmarkBits(value: number, mask: number): NftWord {
  const keep = ~mask >>> 0;
  return { istio: `ct mark set ct mark & ${hex(keep)} |  ${hex(value)}`, kernel: `ct mark set ct mark & ${hex8((keep | value) >>> 0)} | ${hex8(value)}` };
}

export function snatTo(c: Cidr): NftWord {
  return { istio: `snat to ${c.text}`, kernel: `snat ${ipKeyword(c.family)} to ${formatAddress(c.bytes)}`, family: c.family };
}

import ipaddr from 'ipaddr.js';

export type Family = 'ipv4' | 'ipv6';

/**
 * An address prefix. `text` is the spelling the user gave (Istio prints CIDRs exactly as given);
 * `bytes` is the network address with host bits cleared (the kernel stores and prints that).
 */
export interface Cidr {
  readonly family: Family;
  readonly text: string;
  readonly bytes: readonly number[];
  readonly prefix: number;
}

/** Why a string is not an address or CIDR, or the parsed value. Pure; never throws. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const V4_PART = /^(0|[1-9][0-9]{0,2})$/;

function isDottedQuad(text: string): boolean {
  const parts = text.split('.');
  return parts.length === 4 && parts.every((p) => V4_PART.test(p) && Number(p) <= 255);
}

/**
 * ipaddr.js reads any embedded dotted quad as IPv4-mapped (`::1.2.3.4` becomes `::ffff:1.2.3.4`), so the
 * dotted tail is turned into two hex groups before it parses the rest.
 */
function embeddedV4ToHex(text: string): string | undefined {
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (!tail.includes('.')) return text;
  if (!isDottedQuad(tail)) return undefined;
  const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
  return `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

function parseAddress(text: string): Parsed<ipaddr.IPv4 | ipaddr.IPv6> {
  if (text.includes('%')) return { ok: false, reason: 'zones are not allowed' };
  if (text.includes(':')) {
    const hex = embeddedV4ToHex(text);
    if (hex === undefined || !ipaddr.IPv6.isValid(hex)) return { ok: false, reason: 'not an IPv6 address' };
    return { ok: true, value: ipaddr.IPv6.parse(hex) };
  }
  if (!isDottedQuad(text)) return { ok: false, reason: 'not an IPv4 address (four decimal octets, no leading zeros)' };
  return { ok: true, value: ipaddr.IPv4.parse(text) };
}

function maskBytes(bytes: readonly number[], prefix: number): number[] {
  return bytes.map((b, i) => {
    const bits = Math.max(0, Math.min(8, prefix - i * 8));
    return bits === 0 ? 0 : b & (0xff << (8 - bits)) & 0xff;
  });
}

/** Parses `addr/len` (both families). Host bits are allowed, as Go's netip.ParsePrefix allows them. */
export function parseCidr(text: string): Parsed<Cidr> {
  const slash = text.indexOf('/');
  if (slash < 0) return { ok: false, reason: 'not a CIDR (expected address/prefix-length)' };
  const addr = parseAddress(text.slice(0, slash));
  if (!addr.ok) return addr;
  const lenText = text.slice(slash + 1);
  const max = addr.value.kind() === 'ipv4' ? 32 : 128;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(lenText) || Number(lenText) > max) {
    return { ok: false, reason: `prefix length must be 0-${max}` };
  }
  const prefix = Number(lenText);
  const family: Family = addr.value.kind() === 'ipv4' ? 'ipv4' : 'ipv6';
  return { ok: true, value: { family, text, prefix, bytes: maskBytes(addr.value.toByteArray(), prefix) } };
}

/**
 * Parses a bare address into a host CIDR (/32 or /128). Its text is `addr/len`, as Istio renders DNS servers,
 * or the bare address with `bare` (as Istio renders the probe SNAT address).
 */
export function parseHostAddress(text: string, opts: { bare?: boolean } = {}): Parsed<Cidr> {
  const addr = parseAddress(text);
  if (!addr.ok) return addr;
  const len = addr.value.kind() === 'ipv4' ? 32 : 128;
  const parsed = parseCidr(`${text}/${len}`);
  return parsed.ok && opts.bare ? { ok: true, value: { ...parsed.value, text } } : parsed;
}

/** A constant CIDR known to be valid; throws on a programming error. */
export function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  if (!parsed.ok) throw new Error(`bad constant CIDR ${text}: ${parsed.reason}`);
  return parsed.value;
}

/** Loopback as Go's netip.Addr.IsLoopback judges the address as given (host bits included): 127/8 or ::1. */
export function isLoopbackCidr(c: Cidr): boolean {
  const addr = parseAddress(c.text.slice(0, c.text.indexOf('/')));
  return addr.ok && addr.value.range() === 'loopback';
}

import type { Family } from '../model/rule.js';
import { align4, attributes, HEADER, messageType, NLM_F as F } from '../inspect/netlink.js';

/**
 * The rtnetlink (NETLINK_ROUTE) messages meshcap's routing sends in-process instead of running `ip`: each
 * change byte for byte what iproute2 6.1 sends for the same `ip -batch` line (captured with strace, see
 * test/unit/exec/rtnetlink.test.ts), the three dumps its reads need, and the parse of their replies.
 * Pure (linux/netlink.h, rtnetlink.h, fib_rules.h, if_addr.h, if_link.h); src/exec/native.ts does the I/O.
 */

export const RTM = { NEWLINK: 16, GETLINK: 18, NEWADDR: 20, DELADDR: 21, GETADDR: 22, NEWROUTE: 24, DELROUTE: 25, GETROUTE: 26, NEWRULE: 32, DELRULE: 33, GETRULE: 34 } as const;
const NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(RTM).map(([k, v]) => [v, `RTM_${k}`]));

const AF: Record<Family, number> = { ipv4: 2, ipv6: 10 };
const FRA = { PRIORITY: 6, FWMARK: 10, TABLE: 15, FWMASK: 16 } as const;
const RTA = { DST: 1, OIF: 4, TABLE: 15 } as const;
const IFA = { ADDRESS: 1, LOCAL: 2 } as const;
const IFLA = { IFNAME: 3, EXT_MASK: 29 } as const;
const RTEXT_FILTER_SKIP_STATS = 1 << 3;
const FR_ACT_TO_TBL = 1;
const RTN_LOCAL = 2;
const RTPROT_BOOT = 3;
const RT_SCOPE_UNIVERSE = 0;
const RT_SCOPE_HOST = 254;
/** Table ids above this go in an attribute (the header's byte holds RT_TABLE_UNSPEC), as iproute2 does. */
const BYTE_TABLE_MAX = 255;

type Attr = readonly [type: number, value: Buffer];

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

/** One request: nlmsghdr (seq 0: the sender numbers them), the family header, the attributes. */
function message(type: number, flags: number, header: Buffer, attrs: readonly Attr[] = []): Buffer {
  const size = attrs.reduce((n, [, v]) => n + align4(4 + v.length), HEADER + header.length);
  const b = Buffer.alloc(size);
  b.writeUInt32LE(size, 0);
  b.writeUInt16LE(type, 4);
  b.writeUInt16LE(flags, 6);
  header.copy(b, HEADER);
  let off = HEADER + header.length;
  for (const [t, v] of attrs) {
    b.writeUInt16LE(4 + v.length, off);
    b.writeUInt16LE(t, off + 2);
    v.copy(b, off + 4);
    off += align4(4 + v.length);
  }
  return b;
}

/** fib_rule_hdr / rtmsg: family, dst_len, src_len, tos, table, then three family-specific bytes, flags. */
const header12 = (bytes: readonly number[]) => Buffer.from([...bytes, 0, 0, 0, 0]);
const ifaddrmsg = (family: number, prefix: number, scope: number, index: number) => {
  const b = Buffer.from([family, prefix, 0, scope, 0, 0, 0, 0]);
  b.writeUInt32LE(index, 4);
  return b;
};
const byteTable = (table: number) => (table > BYTE_TABLE_MAX ? 0 : table);

export interface RuleSpec {
  readonly family: Family;
  readonly mark: number;
  readonly mask?: number;
  readonly priority?: number;
  readonly table: number;
}

/** `ip rule add|del fwmark M[/K] [priority P] lookup T`. */
export function encodeRule(op: 'add' | 'del', r: RuleSpec): Buffer {
  const attrs: Attr[] = [[FRA.FWMARK, u32(r.mark)]];
  if (r.mask !== undefined) attrs.push([FRA.FWMASK, u32(r.mask)]);
  if (r.priority !== undefined) attrs.push([FRA.PRIORITY, u32(r.priority)]);
  if (r.table > BYTE_TABLE_MAX) attrs.push([FRA.TABLE, u32(r.table)]);
  const add = op === 'add';
  return message(add ? RTM.NEWRULE : RTM.DELRULE, F.REQUEST | F.ACK | (add ? F.EXCL | F.CREATE : 0), header12([AF[r.family], 0, 0, 0, byteTable(r.table), 0, 0, add ? FR_ACT_TO_TBL : 0]), attrs);
}

/** `ip route replace|del local 0.0.0.0/0 (::/0) dev <oif> table T` (iproute2: IPv4's local routes are scope host, IPv6's universe). */
export function encodeLocalRoute(op: 'replace' | 'del', r: { readonly family: Family; readonly table: number; readonly oif: number }): Buffer {
  const attrs: Attr[] = [[RTA.DST, Buffer.alloc(r.family === 'ipv4' ? 4 : 16)]];
  if (r.table > BYTE_TABLE_MAX) attrs.push([RTA.TABLE, u32(r.table)]);
  attrs.push([RTA.OIF, u32(r.oif)]);
  const replace = op === 'replace';
  const scope = r.family === 'ipv4' ? RT_SCOPE_HOST : RT_SCOPE_UNIVERSE;
  return message(replace ? RTM.NEWROUTE : RTM.DELROUTE, F.REQUEST | F.ACK | (replace ? F.REPLACE | F.CREATE : 0), header12([AF[r.family], 0, 0, 0, byteTable(r.table), replace ? RTPROT_BOOT : 0, scope, RTN_LOCAL]), attrs);
}

/** `ip address replace|del A/P dev <index>` (iproute2's default scope: host for 127/8, universe otherwise; none on del). */
export function encodeAddress(op: 'replace' | 'del', a: { readonly family: Family; readonly bytes: readonly number[]; readonly prefix: number; readonly index: number }): Buffer {
  const replace = op === 'replace';
  const scope = replace && a.family === 'ipv4' && a.bytes[0] === 127 ? RT_SCOPE_HOST : RT_SCOPE_UNIVERSE;
  const addr = Buffer.from(a.bytes);
  return message(replace ? RTM.NEWADDR : RTM.DELADDR, F.REQUEST | F.ACK | (replace ? F.REPLACE | F.CREATE : 0), ifaddrmsg(AF[a.family], a.prefix, scope, a.index), [[IFA.LOCAL, addr], [IFA.ADDRESS, addr]]);
}

/** The link called `name` (its index is what routes and addresses name), without its statistics. */
export function encodeGetLink(name: string): Buffer {
  return message(RTM.GETLINK, F.REQUEST | F.ACK, Buffer.alloc(16), [[IFLA.EXT_MASK, u32(RTEXT_FILTER_SKIP_STATS)], [IFLA.IFNAME, Buffer.from(`${name}\0`, 'utf8')]]);
}

/** A dump of one family's rules, routes (every table) or addresses (every link). */
export function encodeDump(what: 'rules' | 'routes' | 'addresses', family: Family): Buffer {
  if (what === 'addresses') return message(RTM.GETADDR, F.REQUEST | F.DUMP, ifaddrmsg(AF[family], 0, 0, 0));
  return message(what === 'rules' ? RTM.GETRULE : RTM.GETROUTE, F.REQUEST | F.DUMP, header12([AF[family], 0, 0, 0, 0, 0, 0, 0]));
}

/** The request a message is, by name (for errors): `RTM_NEWRULE`. */
export const requestName = (msg: Buffer) => NAMES[messageType(msg)] ?? `netlink type ${messageType(msg)}`;

const attrU32 = (a: Buffer | undefined) => (a !== undefined && a.length >= 4 ? a.readUInt32LE(0) : undefined);

/** One rule of a RTM_GETRULE dump, as `ip rule` reads it: the table from FRA_TABLE, else the header's byte. */
export interface DumpedRule {
  readonly table: number;
  readonly priority: number;
  readonly fwmark?: number;
  readonly fwmask?: number;
}

export function parseRule(msg: Buffer): DumpedRule {
  const a = attributes(msg, HEADER + 12);
  const fwmark = attrU32(a.get(FRA.FWMARK));
  const fwmask = attrU32(a.get(FRA.FWMASK));
  return { table: attrU32(a.get(FRA.TABLE)) ?? msg.readUInt8(HEADER + 4), priority: attrU32(a.get(FRA.PRIORITY)) ?? 0, ...(fwmark === undefined ? {} : { fwmark }), ...(fwmask === undefined ? {} : { fwmask }) };
}

/** One route of a RTM_GETROUTE dump: its table, type, prefix length and output interface. */
export interface DumpedRoute {
  readonly table: number;
  readonly local: boolean;
  readonly dstLen: number;
  readonly oif?: number;
}

export function parseRoute(msg: Buffer): DumpedRoute {
  const a = attributes(msg, HEADER + 12);
  const oif = attrU32(a.get(RTA.OIF));
  return { table: attrU32(a.get(RTA.TABLE)) ?? msg.readUInt8(HEADER + 4), local: msg.readUInt8(HEADER + 7) === RTN_LOCAL, dstLen: msg.readUInt8(HEADER + 1), ...(oif === undefined ? {} : { oif }) };
}

/** One address of a RTM_GETADDR dump: its link, the address (IFA_LOCAL, else IFA_ADDRESS, as `ip` shows it) and prefix. */
export interface DumpedAddress {
  readonly index: number;
  readonly prefix: number;
  readonly bytes: readonly number[];
}

export function parseAddress(msg: Buffer): DumpedAddress {
  const a = attributes(msg, HEADER + 8);
  return { index: msg.readUInt32LE(HEADER + 4), prefix: msg.readUInt8(HEADER + 1), bytes: [...(a.get(IFA.LOCAL) ?? a.get(IFA.ADDRESS) ?? [])] };
}

/** The index of the link a RTM_NEWLINK reply describes. */
export const parseLinkIndex = (msg: Buffer) => msg.readInt32LE(HEADER + 4);

/** strerror(3)'s words for the errnos routing requests meet; the number for the rest. */
const ERRNO_TEXT: Readonly<Record<number, string>> = {
  1: 'Operation not permitted',
  2: 'No such file or directory',
  3: 'No such process',
  12: 'Cannot allocate memory',
  13: 'Permission denied',
  16: 'Device or resource busy',
  17: 'File exists',
  19: 'No such device',
  22: 'Invalid argument',
  34: 'Numerical result out of range',
  95: 'Operation not supported',
  97: 'Address family not supported by protocol',
  99: 'Cannot assign requested address',
  100: 'Network is down',
  101: 'Network is unreachable',
  105: 'No buffer space available',
};

export const errnoText = (errno: number) => ERRNO_TEXT[errno] ?? `errno ${errno}`;
export const ENETDOWN = 100;

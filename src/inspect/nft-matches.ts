import type { Family } from '../model/cidr.js';
import type { Proto } from '../model/rule.js';
import type { InspectedClause } from './types.js';
import { parseAddress, parseIface, parseNumber, parseRange, readCommaList, readNot, readValues, type Words } from './nft-words-read.js';

/**
 * nft match expressions → the model's clauses (or the save parser's extra ones): one expression per call,
 * read from the cursor. Undefined: not a match this reader knows (the caller turns the rest into `foreign`).
 */

export interface MatchContext {
  /** The key trace looks a named set up by (`inet istio-ambient-nat istio-inpod-probes-v4`). */
  readonly setKey: (name: string) => string;
}

type Clauses = InspectedClause[] | undefined;
const FAMILY: Record<string, Family> = { ip: 'ipv4', ip6: 'ipv6' };
const neg = (not: boolean) => (not ? { not: true as const } : {});

function readAddress(w: Words, proto: string, ctx: MatchContext): Clauses {
  const family = FAMILY[proto];
  const field = w.next();
  if (family === undefined) return undefined;
  const nf: InspectedClause = { k: 'nfproto', family };
  if (field === 'protocol') {
    const not = readNot(w);
    const p = w.next();
    return p === undefined ? undefined : [nf, { k: 'proto-other', not, proto: p }];
  }
  const dir = field === 'saddr' ? 'src' : field === 'daddr' ? 'dst' : undefined;
  if (dir === undefined) return undefined;
  const not = readNot(w);
  if (w.peek()?.startsWith('@')) return [nf, { k: 'set-match', not, name: ctx.setKey((w.next() ?? '').slice(1)), dirs: [dir] }];
  const values = readValues(w);
  const addr = values?.length === 1 ? parseAddress(values[0] ?? '') : undefined;
  return addr === undefined || addr.family !== family ? undefined : [nf, { k: dir, ...neg(not), addr }];
}

function readPorts(w: Words, proto: Proto): Clauses {
  const field = w.next();
  if (field !== 'dport' && field !== 'sport') return undefined;
  const not = readNot(w);
  const ranges = readValues(w)?.map(parseRange);
  if (ranges === undefined || ranges.length === 0 || ranges.some((r) => r === undefined)) return undefined;
  const rs = ranges as [number, number][];
  const p: InspectedClause = { k: 'proto', proto };
  const [only] = rs;
  if (rs.length === 1 && only !== undefined) {
    return only[0] === only[1] ? [p, { k: 'port', dir: field, ...neg(not), port: only[0] }] : [p, { k: 'port-range', dir: field, not, from: only[0], to: only[1] }];
  }
  if (field === 'dport' && rs.every(([a, b]) => a === b)) return [p, { k: 'multiport', ...neg(not), ports: rs.map(([a]) => a) }];
  return [p, { k: 'ports', dir: field, not, ranges: rs }];
}

/** `mark V`, `mark != V`, `mark & M == V`, `mark and M != V` (after `meta` / `ct`). */
function readMark(w: Words, k: 'mark' | 'connmark'): Clauses {
  let mask: number | undefined;
  if (w.take('&') || w.take('and')) {
    mask = parseNumber(w.next());
    if (mask === undefined) return undefined;
  }
  const not = readNot(w);
  if (!not) w.take('==');
  const mark = parseNumber(w.next());
  if (mark === undefined) return undefined;
  return [{ k, ...neg(not), mark, ...(mask === undefined || mask === 0xffffffff ? {} : { mask }) }];
}

function readMeta(w: Words): Clauses {
  const key = w.next();
  if (key === 'mark') return readMark(w, 'mark');
  if (key === 'iifname' || key === 'oifname') return readIface(w, key);
  const not = readNot(w);
  const v = w.next();
  if (v === undefined) return undefined;
  if (key === 'l4proto') return !not && (v === 'tcp' || v === 'udp') ? [{ k: 'proto', proto: v }] : v === '{' ? undefined : [{ k: 'proto-other', not, proto: v }];
  if (key === 'nfproto') return v === 'ipv4' || v === 'ipv6' ? [{ k: 'nfproto', family: not ? (v === 'ipv4' ? 'ipv6' : 'ipv4') : v }] : undefined;
  if (key !== 'skuid' && key !== 'skgid') return undefined;
  const kind = key === 'skuid' ? 'uid' : 'gid';
  const range = parseRange(v);
  if (range === undefined) return undefined;
  if (range[0] !== range[1]) return [{ k: 'owner-range', kind, not, from: range[0], to: range[1] }];
  return [{ k: 'owner', kind, ...neg(not), id: { text: String(range[0]), id: range[0] } }];
}

function readIface(w: Words, key: string): Clauses {
  const not = readNot(w);
  const values = readValues(w);
  if (values?.length !== 1 || values[0] === undefined) return undefined;
  return [{ k: key === 'iifname' ? 'in' : 'out', ...neg(not), iface: parseIface(values[0]) }];
}

function readCt(w: Words): Clauses {
  const key = w.next();
  if (key === 'mark') return readMark(w, 'connmark');
  if (key !== 'state') return undefined;
  const not = readNot(w);
  const states = readCommaList(w);
  return states === undefined ? undefined : [{ k: 'state', not, states: states.map((s) => s.toUpperCase()) }];
}

/** Reads one match expression at the cursor; undefined (cursor anywhere) when it is not one this reader knows. */
export function readMatch(w: Words, ctx: MatchContext): Clauses {
  const head = w.next();
  switch (head) {
    case 'ip':
    case 'ip6':
      return readAddress(w, head, ctx);
    case 'tcp':
    case 'udp':
      return readPorts(w, head);
    case 'iifname':
    case 'oifname':
      return readIface(w, head);
    case 'meta':
      return w.peek(1) === 'set' ? undefined : readMeta(w);
    case 'ct':
      return w.peek(1) === 'set' ? undefined : readCt(w);
    default:
      return undefined;
  }
}

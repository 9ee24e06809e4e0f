import type { Proto } from '../model/rule.js';
import type { InspectedClause } from './types.js';

/** One `[!] --option value…` of a match module or target, as printed. */
export interface OptionItem {
  readonly not: boolean;
  readonly opt: string;
  readonly values: string[];
}

const num = (s: string | undefined): number | undefined => (s !== undefined && /^(0x[0-9a-f]+|[0-9]+)$/i.test(s) ? Number(s) : undefined);

/** `V` or `V/M` (hex or decimal). */
export function parseMarkValue(text: string | undefined): { mark: number; mask: number | undefined } | undefined {
  const [v, m, extra] = (text ?? '').split('/');
  const mark = num(v);
  const mask = m === undefined ? undefined : num(m);
  if (mark === undefined || extra !== undefined || (m !== undefined && mask === undefined)) return undefined;
  return { mark, mask: mask === 0xffffffff ? undefined : mask };
}

/** `N` or `N:M` (ports) / `N-M` (owner ids). */
function parseRange(text: string | undefined, sep: string): [number, number] | undefined {
  const parts = (text ?? '').split(sep);
  const from = num(parts[0]);
  const to = parts.length === 2 ? num(parts[1]) : from;
  return from === undefined || to === undefined || parts.length > 2 ? undefined : [from, to];
}

type Reader = (item: OptionItem, proto: string | undefined, module: string) => InspectedClause | undefined;

const portItem: Reader = (item, _proto, module) => {
  const dir = item.opt === '--dport' || item.opt === '--destination-port' ? 'dport' : item.opt === '--sport' || item.opt === '--source-port' ? 'sport' : undefined;
  if (dir !== undefined) {
    const r = parseRange(item.values[0], ':');
    if (r === undefined || item.values.length !== 1) return undefined;
    if (r[0] === r[1]) return item.not ? { k: 'port', dir, not: true, port: r[0] } : { k: 'port', dir, port: r[0] };
    return { k: 'port-range', dir, not: item.not, from: r[0], to: r[1] };
  }
  if (module !== 'tcp') return undefined;
  if (item.opt === '--syn') return { k: 'tcp-flags', not: item.not, mask: ['FIN', 'SYN', 'RST', 'ACK'], comp: ['SYN'] };
  if (item.opt === '--tcp-flags' && item.values.length === 2) {
    return { k: 'tcp-flags', not: item.not, mask: (item.values[0] ?? '').split(','), comp: (item.values[1] ?? '').split(',') };
  }
  return undefined;
};

const multiportItem: Reader = (item) => {
  const dir = /^--(dports|destination-ports)$/.test(item.opt) ? 'dport' : /^--(sports|source-ports)$/.test(item.opt) ? 'sport' : item.opt === '--ports' ? 'any' : undefined;
  if (dir === undefined || item.values.length !== 1) return undefined;
  const ranges = (item.values[0] ?? '').split(',').map((p) => parseRange(p, ':'));
  if (ranges.some((r) => r === undefined)) return undefined;
  const rs = ranges as [number, number][];
  if (dir === 'dport' && rs.every(([a, b]) => a === b)) return item.not ? { k: 'multiport', not: true, ports: rs.map(([a]) => a) } : { k: 'multiport', ports: rs.map(([a]) => a) };
  return { k: 'ports', dir, not: item.not, ranges: rs };
};

const ownerItem: Reader = (item) => {
  if (item.opt === '--socket-exists') return item.not ? { k: 'socket-exists-not' } : { k: 'socket-exists' };
  const kind = item.opt === '--uid-owner' ? 'uid' : item.opt === '--gid-owner' ? 'gid' : undefined;
  const r = parseRange(item.values[0], '-');
  if (kind === undefined || r === undefined) return undefined;
  if (r[0] === r[1]) {
    const id = { text: String(r[0]), id: r[0] };
    return item.not ? { k: 'owner', kind, not: true, id } : { k: 'owner', kind, id };
  }
  return { k: 'owner-range', kind, not: item.not, from: r[0], to: r[1] };
};

const markItem: Reader = (item, _p, module) => {
  const v = item.opt === '--mark' ? parseMarkValue(item.values[0]) : undefined;
  if (v === undefined) return undefined;
  const k = module === 'connmark' ? 'connmark' : 'mark';
  return { k, ...(item.not ? { not: true } : {}), mark: v.mark, ...(v.mask === undefined ? {} : { mask: v.mask }) };
};

const conntrackItem: Reader = (item, _p, module) => {
  if (item.opt !== (module === 'state' ? '--state' : '--ctstate') || item.values.length !== 1) return undefined;
  const states = (item.values[0] ?? '').split(',');
  return module === 'conntrack' && !item.not ? { k: 'conntrack', states } : { k: 'state', not: item.not, states };
};

const setItem: Reader = (item) => {
  if (item.opt !== '--match-set' || item.values.length !== 2) return undefined;
  const dirs = (item.values[1] ?? '').split(',');
  if (dirs.some((d) => d !== 'src' && d !== 'dst')) return undefined;
  const name = item.values[0] ?? '';
  const d = dirs as ('src' | 'dst')[];
  return !item.not && d.length === 1 && d[0] !== undefined ? { k: 'set', name, dir: d[0] } : { k: 'set-match', not: item.not, name, dirs: d };
};

const commentItem: Reader = (item) => {
  if (item.opt !== '--comment' || item.not) return undefined;
  const text = item.values.join(' ');
  return { k: 'comment', text: text.startsWith('"') ? text.slice(1, -1).replace(/\\(.)/g, '$1') : text };
};

const READERS: Record<string, Reader> = {
  tcp: portItem,
  udp: portItem,
  multiport: multiportItem,
  owner: ownerItem,
  mark: markItem,
  connmark: markItem,
  conntrack: conntrackItem,
  state: conntrackItem,
  set: setItem,
  comment: commentItem,
};

/**
 * One `-m NAME opts…` group → clauses. A module meshcap knows gives one clause per option (`-m tcp` alone is
 * the bare protocol match); an option it cannot read turns the whole group into one foreign clause.
 */
export function parseMatchModule(name: string, items: readonly OptionItem[], proto: string | undefined, tokens: readonly string[]): InspectedClause[] {
  const reader = READERS[name];
  if (reader === undefined) return [{ k: 'foreign', module: name, tokens }];
  if (items.length === 0) {
    return (name === 'tcp' || name === 'udp') && proto === name ? [{ k: 'protomatch', proto: name as Proto }] : [{ k: 'foreign', module: name, tokens }];
  }
  const out = items.map((item) => reader(item, proto, name));
  if (out.some((c) => c === undefined)) return [{ k: 'foreign', module: name, tokens }];
  return out as InspectedClause[];
}

import type { InspectedTarget } from './types.js';
import { parseAddress, parseNumber, type Words } from './nft-words-read.js';

/**
 * nft statements → targets: one statement per call (`readStatement`), and a rule's statements folded into the
 * one target the walk follows (`foldStatements`). What either cannot read becomes `other`, never a guess.
 */

const FULL = 0xffffffff;
/** A statement with no effect on the packet: a counter, a comment, a log. */
export const NO_EFFECT = { k: 'observe', name: 'counter' } as const;
type Stmt = InspectedTarget | typeof NO_EFFECT;

/** `ct mark` / `meta mark` / `mark` [& A] [| B] after `set`: the source and the bits kept and set. */
function readMarkExpr(w: Words): { from: 'ct' | 'meta' | number; and: number; or: number } | undefined {
  const first = w.next();
  const value = parseNumber(first);
  if (value !== undefined) return { from: value, and: 0, or: 0 };
  const from = first === 'ct' ? 'ct' : first === 'meta' ? 'meta' : first === 'mark' ? 'meta' : undefined;
  if (from === undefined || (first !== 'mark' && !w.take('mark'))) return undefined;
  let and = FULL;
  let or = 0;
  if (w.take('&') || w.take('and')) and = parseNumber(w.next()) ?? -1;
  if (w.take('|') || w.take('or')) or = parseNumber(w.next()) ?? -1;
  return and < 0 || or < 0 ? undefined : { from, and, or };
}

/** `meta mark set …` / `ct mark set …` as the model's mark targets (xmark: `(v & ~mask) ^ mark`). */
function readMarkSet(w: Words, dest: 'meta' | 'ct'): Stmt | undefined {
  const e = readMarkExpr(w);
  if (e === undefined) return undefined;
  if (typeof e.from === 'number') return dest === 'meta' ? { k: 'set-mark', mark: e.from } : { k: 'connmark-set', mark: e.from, mask: FULL };
  if (e.from !== dest) return e.and === FULL && e.or === 0 ? { k: 'connmark', op: dest === 'ct' ? 'save' : 'restore' } : undefined;
  // `(v & A) | B` is `(v & (A & ~B)) ^ B`: an xmark with mask ~(A & ~B).
  const mask = ~(e.and & ~e.or) >>> 0;
  return dest === 'meta' ? { k: 'set-mark', mark: e.or, mask } : { k: 'connmark-set', mark: e.or, mask };
}

/** `to :P` after redirect / tproxy [ip|ip6]. */
function readToPort(w: Words): number | undefined {
  if (!w.take('to')) return undefined;
  const m = /^:([0-9]+)$/.exec(w.next() ?? '');
  return m === null ? undefined : Number(m[1]);
}

function readNat(w: Words, kind: 'snat' | 'dnat'): Stmt | undefined {
  if (w.peek() === 'ip' || w.peek() === 'ip6') w.next();
  if (!w.take('to')) return undefined;
  const to = w.next() ?? '';
  const m = /^\[(.+)\](?::([0-9]+))?$/.exec(to) ?? /^([0-9.]+)(?::([0-9]+))?$/.exec(to) ?? /^([0-9a-f:]+)$/i.exec(to);
  const addr = m === null ? undefined : parseAddress(m[1] ?? '');
  if (addr === undefined) return undefined;
  if (kind === 'snat') return m?.[2] === undefined ? { k: 'snat', to: addr } : undefined;
  return { k: 'dnat', addr, port: m?.[2] === undefined ? undefined : Number(m[2]) };
}

/** Reads one statement at the cursor; undefined when it is not one this reader knows. */
export function readStatement(w: Words): Stmt | undefined {
  const head = w.next();
  switch (head) {
    case 'counter':
      return NO_EFFECT;
    case 'comment':
      return w.next()?.startsWith('"') ? NO_EFFECT : undefined;
    case 'accept':
    case 'drop':
    case 'return':
      return { k: 'jump', chain: head.toUpperCase() };
    case 'jump':
    case 'goto': {
      const chain = w.next();
      return chain === undefined ? undefined : head === 'jump' ? { k: 'jump', chain } : { k: 'goto', chain };
    }
    case 'redirect': {
      const port = readToPort(w);
      return port === undefined ? undefined : { k: 'redirect', port, spelling: 'to-ports' };
    }
    case 'tproxy': {
      if (w.peek() === 'ip' || w.peek() === 'ip6') w.next();
      const port = readToPort(w);
      return port === undefined ? undefined : { k: 'tproxy', mark: 0, mask: 0, port };
    }
    case 'meta':
    case 'ct':
      if (head === 'ct' && w.take('zone')) {
        const zone = w.take('set') ? parseNumber(w.next()) : undefined;
        return zone === undefined ? undefined : { k: 'ct-zone', zone };
      }
      return w.take('mark') && w.take('set') ? readMarkSet(w, head) : undefined;
    case 'snat':
    case 'dnat':
      return readNat(w, head);
    case 'masquerade':
      return { k: 'masquerade' };
    case 'notrack':
      return { k: 'notrack' };
    case 'reject':
      return w.done || w.peek() === 'counter' ? { k: 'reject' } : undefined;
    default:
      return undefined;
  }
}

/**
 * A rule's statements as one target: none, one, or nft's TPROXY idiom (`tproxy … meta mark set M … accept`,
 * which the model's TPROXY target is). Anything else is `other`, named by the rule's words.
 */
export function foldStatements(stmts: readonly Stmt[], words: string): InspectedTarget {
  const acting = stmts.filter((s) => s.k !== 'observe');
  const [only] = acting;
  if (acting.length === 0) return { k: 'none' };
  if (acting.length === 1 && only !== undefined && only.k !== 'tproxy') return only;
  const tproxy = acting.find((s) => s.k === 'tproxy');
  const marks = acting.filter((s) => s.k === 'set-mark');
  const last = acting[acting.length - 1];
  if (tproxy?.k === 'tproxy' && last?.k === 'jump' && last.chain === 'ACCEPT' && acting.length === 2 + marks.length && marks.length <= 1) {
    const m = marks[0];
    return { k: 'tproxy', port: tproxy.port, mark: m?.k === 'set-mark' ? m.mark : 0, mask: m?.k === 'set-mark' ? (m.mask ?? FULL) : 0 };
  }
  return { k: 'other', name: 'nft statements', tokens: [words] };
}

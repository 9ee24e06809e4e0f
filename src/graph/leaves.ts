import type { InspectedTarget } from '../inspect/types.js';
import type { NodeKind } from './model.js';

/** Where a rule's edge ends: a chain of its table, or a leaf that names what the target does. */
export type EdgeEnd = { readonly k: 'chain'; readonly chain: string; readonly goto: boolean } | { readonly k: 'leaf'; readonly label: string; readonly kind: Exclude<NodeKind, 'hook' | 'chain'> };

const hex = (n: number) => `0x${n.toString(16)}`;
const masked = (mark: number, mask: number | undefined) => (mask === undefined || mask === 0xffffffff ? hex(mark) : `${hex(mark)}/${hex(mask)}`);
const leaf = (label: string, kind: Exclude<NodeKind, 'hook' | 'chain'>): EdgeEnd => ({ k: 'leaf', label, kind });

/** The verbs iptables spells as jumps: verdicts, not chains. */
const VERDICT_JUMPS: Record<string, EdgeEnd> = { ACCEPT: leaf('ACCEPT', 'pass'), RETURN: leaf('RETURN', 'pass'), DROP: leaf('DROP', 'drop') };

/** A target as the end of its rule's edge: jumps and gotos into chains, verdicts and effects as leaves. */
export function describeEnd(t: InspectedTarget, chains: ReadonlySet<string>): EdgeEnd {
  switch (t.k) {
    case 'jump':
      return VERDICT_JUMPS[t.chain] ?? (chains.has(t.chain) ? { k: 'chain', chain: t.chain, goto: false } : leaf(`missing chain ${t.chain}`, 'unknown'));
    case 'goto':
      return chains.has(t.chain) ? { k: 'chain', chain: t.chain, goto: true } : leaf(`missing chain ${t.chain}`, 'unknown');
    case 'redirect':
      return leaf(`REDIRECT :${t.port}`, 'capture');
    case 'tproxy':
      return leaf(`TPROXY :${t.port === 0 ? 'original port' : t.port} mark ${masked(t.mark, t.mask)}`, 'capture');
    case 'dnat':
      return leaf(`DNAT ${t.addr?.text.replace(/\/[0-9]+$/, '') ?? ''}${t.port === undefined ? '' : `:${t.port}`}`.trimEnd(), 'pass');
    case 'snat':
      return leaf('SNAT', 'pass');
    case 'masquerade':
      return leaf('MASQUERADE', 'pass');
    case 'reject':
      return leaf('REJECT', 'drop');
    case 'set-mark':
      return leaf(`MARK set ${masked(t.mark, t.mask)}`, 'effect');
    case 'connmark':
      return leaf(`CONNMARK ${t.op}`, 'effect');
    case 'connmark-set':
      return leaf(`CONNMARK set ${masked(t.mark, t.mask)}`, 'effect');
    case 'ct-zone':
      return leaf(`CT zone ${t.zone}`, 'effect');
    case 'notrack':
      return leaf('NOTRACK', 'effect');
    case 'observe':
      return leaf(t.name, 'effect');
    case 'none':
      return leaf('count only', 'effect');
    case 'other':
      return leaf(`${t.name} (not followed by trace)`, 'unknown');
  }
}

import { PlanError } from '../errors.js';
import type { NftMode } from '../model/nft/layout.js';
import { nftChainName, PROBE_SETS } from '../model/nft/layout.js';
import { isPerFamily, type Clause, type Family, type Rule, type Target } from '../model/rule.js';
import * as W from './nft-words.js';
import type { NftWord } from './nft-words.js';

/**
 * How Istio's nft builders spell each rule the model plans (istio-nftables.md §3–5). The model decides which
 * rules exist; this file only decides their nft words: match order, where `meta l4proto tcp` is written,
 * and the few spellings that differ per rule. Returns undefined for a rule the rule's family does not carry.
 */

/** The clause variant(s) whose `k` can be K (`src` and `dst` share one variant, as do `mark` and `connmark`). */
type Having<C, K> = C extends { readonly k: infer CK } ? ([K] extends [CK] ? C : never) : never;
type ClauseOf<K extends Clause['k']> = Having<Clause, K>;
const find = <K extends Clause['k']>(r: Rule, k: K): ClauseOf<K> | undefined => r.match.find((c): c is ClauseOf<K> => c.k === k);

/** Sidecar rules whose tcp port match Istio writes without `meta l4proto tcp`. */
const BARE_TCP_PORT = new Set(['skip-excluded-outbound-port', 'redirect-outbound-port']);
/** Raw-table DNS zone rules: Istio writes the port before the address. */
const PORT_FIRST = new Set(['dns-zone-app', 'dns-zone-upstream-reply', 'dns-zone-agent-upstream', 'dns-zone-agent-reply']);

interface SpellContext {
  readonly mode: NftMode;
  readonly family: Family;
  readonly kubeletUid?: number | undefined;
}

function address(c: ClauseOf<'src' | 'dst'>, family: Family): NftWord | null {
  const a = isPerFamily(c.addr) ? c.addr[family] : c.addr;
  if (a.family !== family) return null;
  return W.addr(c.k === 'src' ? 'saddr' : 'daddr', a, c.not);
}

function portWord(r: Rule): NftWord | undefined {
  const proto = find(r, 'proto')?.proto ?? 'tcp';
  const p = find(r, 'port');
  if (p) return W.ports(proto, p.dir, [p.port], p.not);
  const m = find(r, 'multiport');
  return m ? W.ports(proto, 'dport', m.ports, m.not) : undefined;
}

/** The ambient mark spellings: nat `mark and`, raw `meta mark and`, mangle `meta mark &`. */
function ambientMark(r: Rule, c: ClauseOf<'mark'>, family: Family): NftWord {
  const what = r.table === 'raw' ? 'meta mark and' : r.table === 'mangle' ? 'meta mark &' : 'mark';
  // Istio's IPv4 inbound redirect has a string literal ending in a space: two spaces before `!=`.
  const gap = r.purpose === 'redirect-inbound-plaintext' && family === 'ipv4' ? '  ' : ' ';
  return W.maskedMark(what, c.mark, c.mask ?? 0xffffffff, { not: c.not ?? false, gap });
}

/** Whether Istio writes `meta l4proto tcp` for this rule (always before a bare tcp rule; per rule before a port). */
function writesL4(r: Rule, ctx: SpellContext, hasPort: boolean, hasAddr: boolean): boolean {
  const proto = find(r, 'proto')?.proto;
  if (proto === undefined) return find(r, 'conntrack') !== undefined; // nft's drop-invalid is TCP-only
  if (proto !== 'tcp' || !hasPort) return proto === 'tcp';
  if (ctx.mode !== 'sidecar') return false;
  return !(BARE_TCP_PORT.has(r.purpose) || (r.purpose === 'redirect-dns' && hasAddr));
}

/** The mark and connmark compares, in the rule's mode's spelling. */
function markWords(r: Rule, ctx: SpellContext): { mark?: NftWord | undefined; connmark?: NftWord | undefined } {
  const mark = find(r, 'mark');
  const connmark = find(r, 'connmark');
  return {
    mark: mark && (ctx.mode === 'sidecar' ? W.mark(mark.mark, mark.not) : ambientMark(r, mark, ctx.family)),
    connmark: connmark && (connmark.mask === undefined ? W.ctMark(connmark.mark) : W.maskedMark('ct mark and', connmark.mark, connmark.mask)),
  };
}

/** The node side's kubelet-UID match and probe-set lookup (nft has no `--socket-exists`). */
function probeSetWords(ctx: SpellContext): NftWord[] {
  if (ctx.kubeletUid === undefined) throw new PlanError('the node-side nft rule needs the kubelet UID');
  return [W.owner('uid', { text: String(ctx.kubeletUid), id: ctx.kubeletUid }), W.addrSet(ctx.family, PROBE_SETS[ctx.family].name)];
}

/**
 * The match words in Istio's order: interfaces, `meta l4proto`, addresses, ct state, port, owners, marks —
 * except the raw DNS-zone rules (port first) and ambient's UDP DNS redirect (mark before port).
 */
function matchWords(r: Rule, ctx: SpellContext): NftWord[] | null {
  const addrWords: NftWord[] = [];
  for (const c of r.match) {
    if (c.k !== 'src' && c.k !== 'dst') continue;
    const w = address(c, ctx.family);
    if (w === null) return null;
    addrWords.push(w);
  }
  const port = portWord(r);
  const conntrack = find(r, 'conntrack');
  const { mark, connmark } = markWords(r, ctx);
  const portFirst = PORT_FIRST.has(r.purpose);
  const markFirst = r.purpose === 'redirect-dns-udp';
  const out: NftWord[] = [];
  for (const c of r.match) if (c.k === 'in' || c.k === 'out') out.push(W.iface(c.k, c.iface, c.not));
  if (writesL4(r, ctx, port !== undefined, addrWords.length > 0)) out.push(W.l4('tcp'));
  if (portFirst && port) out.push(port);
  out.push(...addrWords);
  if (conntrack) out.push(W.ctState(conntrack.states));
  if (markFirst && mark) out.push(mark);
  if (!portFirst && port) out.push(port);
  if (find(r, 'set')) out.push(...probeSetWords(ctx));
  for (const c of r.match) if (c.k === 'owner') out.push(W.owner(c.kind, c.id, { not: c.not ?? false, meta: r.table === 'raw' }));
  if (mark && !markFirst) out.push(mark);
  if (connmark) out.push(connmark);
  return out;
}

function verdictWord(mode: NftMode, t: Extract<Target, { k: 'jump' }>): NftWord {
  return W.verdict(['RETURN', 'ACCEPT', 'DROP'].includes(t.chain) ? t.chain.toLowerCase() : `jump ${nftChainName(mode, t.chain)}`);
}

/** The statement words after the matches, with Istio's counter placement. */
function statementWords(r: Rule, ctx: SpellContext): NftWord[] | null {
  const t = r.target;
  const C = W.COUNTER;
  switch (t.k) {
    case 'jump': {
      const v = verdictWord(ctx.mode, t);
      // Ambient's jumps from the base chains carry no counter.
      return ctx.mode === 'ambient' && v.istio.startsWith('jump ') ? [v] : [C, v];
    }
    case 'redirect':
      return [C, W.redirectTo(t.port)];
    case 'set-mark':
      return [C, W.setMark(t.mark)];
    case 'connmark':
      return [C, t.op === 'save' ? W.saveMark : W.restoreMark];
    case 'connmark-set':
      return [C, W.setConnmarkBits(t.mark, t.mask)];
    case 'tproxy':
      return [W.tproxyTo(ctx.family, t.port), W.setMark(t.mark), C, W.verdict('accept')];
    case 'ct-zone':
      return [C, W.ctZone(t.zone)];
    case 'snat': {
      const to = isPerFamily(t.to) ? t.to[ctx.family] : t.to;
      return to.family === ctx.family ? [C, W.snatTo(to)] : null;
    }
  }
}

/**
 * One model rule as nft words for one family, or undefined when the rule has no nft form in that family
 * (an address of the other family, or the host's POSTROUTING jump, which nft does not need).
 */
export function spellNftRule(r: Rule, ctx: SpellContext): NftWord[] | undefined {
  if (ctx.mode === 'ambient-host' && r.chain === 'POSTROUTING') return undefined;
  if (r.target.k === 'tproxy' && ctx.mode !== 'sidecar') throw new PlanError('ambient TPROXY has no nft form (use --inbound redirect)');
  const match = matchWords(r, ctx);
  const stmt = statementWords(r, ctx);
  return match === null || stmt === null ? undefined : [...match, ...stmt];
}

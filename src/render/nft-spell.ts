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

function matchWords(r: Rule, ctx: SpellContext): NftWord[] | null {
  const out: NftWord[] = [];
  const proto = find(r, 'proto')?.proto;
  const port = portWord(r);
  const addrs = r.match.filter((c): c is ClauseOf<'src' | 'dst'> => c.k === 'src' || c.k === 'dst');
  const addrWords: NftWord[] = [];
  for (const c of addrs) {
    const w = address(c, ctx.family);
    if (w === null) return null;
    addrWords.push(w);
  }
  for (const c of r.match) if (c.k === 'in' || c.k === 'out') out.push(W.iface(c.k, c.iface, c.not));
  const bare = ctx.mode === 'sidecar' ? BARE_TCP_PORT.has(r.purpose) || (r.purpose === 'redirect-dns' && addrWords.length > 0) : port !== undefined;
  const conntrack = find(r, 'conntrack');
  if ((proto === 'tcp' && !(bare && port)) || (conntrack && proto === undefined)) out.push(W.l4('tcp'));
  const owners = r.match.filter((c): c is ClauseOf<'owner'> => c.k === 'owner').map((c) => W.owner(c.kind, c.id, { not: c.not ?? false, meta: r.table === 'raw' }));
  const mark = find(r, 'mark');
  const connmark = find(r, 'connmark');
  const markWord = mark && (ctx.mode === 'sidecar' ? W.mark(mark.mark, mark.not) : ambientMark(r, mark, ctx.family));
  const connmarkWord = connmark && (connmark.mask === undefined ? W.ctMark(connmark.mark) : W.maskedMark('ct mark and', connmark.mark, connmark.mask));
  const portFirst = PORT_FIRST.has(r.purpose);
  if (portFirst && port) out.push(port);
  out.push(...addrWords);
  if (conntrack) out.push(W.ctState(conntrack.states));
  // Ambient's UDP DNS redirect puts the mark before the port.
  const markFirst = r.purpose === 'redirect-dns-udp';
  if (markFirst && markWord) out.push(markWord);
  if (!portFirst && port) out.push(port);
  const set = find(r, 'set');
  if (set) {
    if (ctx.kubeletUid === undefined) throw new PlanError('the node-side nft rule needs the kubelet UID');
    out.push(W.owner('uid', { text: String(ctx.kubeletUid), id: ctx.kubeletUid }));
    out.push(W.addrSet(ctx.family, PROBE_SETS[ctx.family].name));
  }
  out.push(...owners);
  if (markWord && !markFirst) out.push(markWord);
  if (connmarkWord) out.push(connmarkWord);
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

import { nftChainName, nftLayout, type BaseChainSpec, type NftMode, type NftTableLayout } from '../model/nft/layout.js';
import type { Plan } from '../model/plan.js';
import { appliesTo, type Family } from '../model/rule.js';
import type { NftWord } from './nft-words.js';
import { spellNftRule } from './nft-spell.js';

/** One rule of an nft table: appended, or inserted before the rule at 0-based `index`. */
export interface NftRuleOp {
  readonly chain: string;
  readonly index?: number;
  readonly words: readonly NftWord[];
}

/** One `inet` table as a transaction writes it: the chains it declares, then its rules in order. */
export interface NftTableBlock {
  readonly layout: NftTableLayout;
  readonly chains: readonly { readonly name: string; readonly base?: BaseChainSpec }[];
  readonly rules: readonly NftRuleOp[];
}

export interface NftRenderOptions {
  readonly mode: NftMode;
  /** The node side matches the kubelet's UID (nft has no `--socket-exists`). */
  readonly kubeletUid?: number | undefined;
}

const isNeutral = (words: readonly NftWord[]) => words.every((w) => w.family === undefined);
/** `applied`: meshcap's own transaction (Istio's words, except where a word carries its own applied spelling). */
export type NftSpelling = 'istio' | 'kernel' | 'applied';
const spell = (w: NftWord, key: NftSpelling) => (key === 'applied' ? (w.applied ?? w.istio) : w[key]);
const text = (words: readonly NftWord[], key: NftSpelling) => words.map((w) => spell(w, key)).filter((s) => s !== '').join(' ');

/**
 * One table's rules in emission order, families merged as one `inet` table holds them: a rule whose words
 * name no family is written once; its per-family twins (`ip daddr` / `ip6 daddr`) one after the other.
 * A family-neutral rule the model plans once per family (a jump) is written once. A family that is off
 * contributes nothing, so no jump is left pointing at a chain that family would have filled (§7.3).
 */
function tableRules(plan: Plan, layout: NftTableLayout, opts: NftRenderOptions): NftRuleOp[] {
  const out: NftRuleOp[] = [];
  const twinSeen = new Map<string, Family>();
  const counts = new Map<string, number>();
  for (const r of plan.rules.filter((x) => x.table === layout.table)) {
    const chain = nftChainName(opts.mode, r.chain);
    let neutralDone = false;
    for (const family of plan.families) {
      if (!appliesTo(r, family)) continue;
      const words = spellNftRule(r, { mode: opts.mode, family, kubeletUid: opts.kubeletUid });
      if (words === undefined) continue;
      if (isNeutral(words)) {
        if (neutralDone) continue;
        neutralDone = true;
        if (r.family !== 'both') {
          const key = `${chain}\n${r.purpose}\n${text(words, 'istio')}`;
          const prev = twinSeen.get(key);
          if (prev !== undefined && prev !== r.family) continue;
          twinSeen.set(key, r.family);
        }
      }
      const n = counts.get(chain) ?? 0;
      // Istio's rule: an insert into a chain holding no more rules than its index is written as an append.
      const index = r.op.k === 'insert' && n > 0 && r.op.position - 1 < n ? r.op.position - 1 : undefined;
      out.push(index === undefined ? { chain, words } : { chain, index, words });
      counts.set(chain, n + 1);
    }
  }
  return out;
}

/** The tables a plan fills, each with the chains that hold a rule or are jumped to, in Istio's order. */
export function buildNftTables(plan: Plan, opts: NftRenderOptions): NftTableBlock[] {
  return nftLayout(opts.mode).flatMap((layout) => {
    const rules = tableRules(plan, layout, opts);
    const used = new Set(rules.map((r) => r.chain));
    for (const r of rules) for (const w of r.words) if (w.istio.startsWith('jump ')) used.add(w.istio.slice(5));
    const chains = layout.chains.filter((c) => used.has(c.name));
    return chains.length === 0 ? [] : [{ layout, chains, rules }];
  });
}

function chainLine(table: string, c: { name: string; base?: BaseChainSpec }): string {
  const spec = c.base === undefined ? '' : ` { type ${c.base.type} hook ${c.base.hook} priority ${c.base.priority} ; }`;
  return `add chain inet ${table} ${c.name}${spec}`;
}

/** A table's lines as Istio's transaction writes them: add, flush, chains, rules (inserts by index). */
export function renderNftTableIstio(block: NftTableBlock, spelling: 'istio' | 'applied' = 'istio'): string[] {
  const t = block.layout.name;
  return [
    `add table inet ${t}`,
    `flush table inet ${t}`,
    ...block.chains.map((c) => chainLine(t, c)),
    ...block.rules.map((r) =>
      r.index === undefined ? `add rule inet ${t} ${r.chain} ${text(r.words, spelling)}` : `insert rule inet ${t} ${r.chain} index ${r.index} ${text(r.words, spelling)}`,
    ),
  ];
}

/** `-n --dry-run-format istio`: exactly the transaction text Istio's nft mode runs (the goldens). */
export function renderNftIstio(blocks: readonly NftTableBlock[]): string {
  const lines = blocks.flatMap((b) => renderNftTableIstio(b));
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** A rule's words as the kernel lists them: `meta l4proto tcp` goes when a tcp header match follows. */
export function kernelRuleText(words: readonly NftWord[]): string {
  const kept = words.filter((w, i) => !(w.l4 && words.slice(i + 1).some((x) => x.tcpHeader)));
  return text(kept, 'kernel');
}

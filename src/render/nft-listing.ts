import { PlanError } from '../errors.js';
import type { BaseChainSpec } from '../model/nft/layout.js';
import { kernelRuleText, type NftTableBlock } from './nft-transaction.js';

/** A set of the node side as the kernel lists it, with the elements this run adds. */
export interface NftSetListing {
  readonly name: string;
  readonly type: 'ipv4_addr' | 'ipv6_addr';
  readonly comment?: string;
  readonly elements: readonly { readonly text: string; readonly comment?: string | undefined }[];
}

/** nft 1.0.6 prints the standard priorities by name where the hook has one (§9). */
function priorityText(b: BaseChainSpec): string {
  if (b.priority === -100 && b.hook === 'prerouting') return 'dstnat';
  if (b.priority === 100 && b.hook === 'postrouting') return 'srcnat';
  if (b.type !== 'nat' && b.priority === -150) return 'mangle';
  if (b.type !== 'nat' && b.priority === -300) return 'raw';
  return String(b.priority);
}

/** Each chain's rule texts after the transaction's appends and inserts ran in order on empty chains. */
function finalChains(block: NftTableBlock): Map<string, string[]> {
  const chains = new Map<string, string[]>(block.chains.map((c) => [c.name, []]));
  for (const r of block.rules) {
    const list = chains.get(r.chain);
    if (list === undefined) throw new PlanError(`nft rule for undeclared chain ${r.chain}`);
    const line = kernelRuleText(r.words);
    if (r.index === undefined) list.push(line);
    else list.splice(r.index, 0, line);
  }
  return chains;
}

function setLines(s: NftSetListing): string[] {
  const elements = s.elements.map((e) => (e.comment === undefined ? e.text : `${e.text} comment "${e.comment}"`));
  return [
    `\tset ${s.name} {`,
    `\t\ttype ${s.type}`,
    ...(s.comment === undefined ? [] : [`\t\tcomment "${s.comment}"`]),
    ...(elements.length === 0 ? [] : [`\t\telements = { ${elements.join(', ')} }`]),
    '\t}',
  ];
}

/**
 * `nft -s list ruleset` after the transaction ran in an empty namespace (nft 1.0.6's spelling): per table its
 * sets, then its chains in creation order, base chains with their hook line, rules in final order.
 */
export function renderNftListing(blocks: readonly NftTableBlock[], sets: readonly NftSetListing[] = []): string {
  const out: string[] = [];
  for (const block of blocks) {
    const chains = finalChains(block);
    const parts: string[][] = [...(block === blocks[0] ? sets.map(setLines) : [])];
    for (const c of block.chains) {
      const head = c.base === undefined ? [] : [`\t\ttype ${c.base.type} hook ${c.base.hook} priority ${priorityText(c.base)}; policy accept;`];
      parts.push([`\tchain ${c.name} {`, ...head, ...(chains.get(c.name) ?? []).map((l) => `\t\t${l}`), '\t}']);
    }
    out.push(`table inet ${block.layout.name} {`, ...parts.flatMap((p, i) => (i === 0 ? p : ['', ...p])), '}');
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

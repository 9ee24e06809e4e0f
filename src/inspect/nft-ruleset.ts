import type { Cidr, Family } from '../model/cidr.js';
import type { Table } from '../model/rule.js';
import { parseNftRuleWords } from './nft-rule.js';
import { parseNftText, type NftDoc, type NftTableDoc } from './nft-text.js';
import { parseAddress } from './nft-words-read.js';
import type { ParsedRule, ParsedTable } from './types.js';

/** The native nft tables of a ruleset, per family, in the shape trace walks; and their sets' members. */
export interface NftRules {
  readonly tables: readonly ParsedTable[];
  readonly sets: ReadonlyMap<string, readonly Cidr[]>;
  readonly problems: readonly string[];
}

/** iptables-nft's own tables: read through `iptables-nft-save`, not twice. */
const IPTABLES_NAMES = new Set(['filter', 'nat', 'mangle', 'raw', 'security']);
const FAMILIES: Record<string, readonly Family[]> = { inet: ['ipv4', 'ipv6'], ip: ['ipv4'], ip6: ['ipv6'] };

export const isIptablesNftTable = (t: { family: string; name: string }): boolean => (t.family === 'ip' || t.family === 'ip6') && IPTABLES_NAMES.has(t.name);

/** The model's table a native table plays (for purposes and verdicts): from its base chains' type and priority. */
function inferTableKind(t: NftTableDoc): Table {
  const bases = t.chains.flatMap((c) => (c.base === undefined ? [] : [c.base]));
  if (bases.some((b) => b.type === 'nat')) return 'nat';
  if (bases.some((b) => b.priority <= -300)) return 'raw';
  return bases.some((b) => b.priority < 0) ? 'mangle' : 'filter';
}

export const nftSetKey = (t: { family: string; name: string }, set: string): string => `${t.family} ${t.name} ${set}`;

function buildTable(t: NftTableDoc, family: Family): ParsedTable {
  const table = inferTableKind(t);
  const label = `${t.family} ${t.name}`;
  const count = new Map<string, number>();
  const rules = t.rules.map((line): ParsedRule => {
    const position = (count.get(line.chain) ?? 0) + 1;
    count.set(line.chain, position);
    const { match, target } = parseNftRuleWords(line.words, { setKey: (name) => nftSetKey(t, name) });
    return { family, table, chain: line.chain, position, match, target, spec: line.printed, printed: line.printed };
  });
  const chains = t.chains.map((c) => ({ name: c.name, policy: c.policy, ...(c.base === undefined ? {} : { base: c.base }) }));
  return { family, table, label, chains, rules };
}

/** The parsed document's native tables (iptables-nft's own left out) for each family they hold. */
export function buildNftRules(doc: NftDoc): NftRules {
  const native = doc.tables.filter((t) => !isIptablesNftTable(t) && FAMILIES[t.family] !== undefined);
  const tables = native.flatMap((t) => (FAMILIES[t.family] ?? []).map((f) => buildTable(t, f)));
  const sets = new Map<string, Cidr[]>();
  for (const t of native) {
    for (const [name, elements] of t.sets) {
      const members = elements.map(parseAddress);
      // A set trace cannot read as addresses stays out, so a lookup in it is unknown.
      if (members.every((m) => m !== undefined)) sets.set(nftSetKey(t, name), members as Cidr[]);
    }
  }
  return { tables, sets, problems: doc.problems };
}

/** `nft list ruleset` text → the native tables trace walks. */
export function parseNftRuleset(text: string): NftRules {
  return buildNftRules(parseNftText(text));
}

/** Whether a dump holds `nft list ruleset` text rather than iptables-save output. */
export function looksLikeNftText(text: string): boolean {
  return /^\s*table\s+(inet|ip|ip6|arp|bridge|netdev)\s+\S+\s*\{/m.test(text);
}

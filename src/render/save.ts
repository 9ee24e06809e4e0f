import { BUILTIN_CHAINS, declaredChains, rulesFor } from '../model/chains.js';
import { appliedRules } from '../model/ownership.js';
import type { Family, Rule, Table } from '../model/rule.js';
import type { Plan } from '../model/plan.js';
import { formatSaveSpec } from './spec.js';

/** Tables in the order iptables-nft-save prints them. (legacy prints them in kernel registration order.) */
export const SAVE_TABLE_ORDER: readonly Table[] = ['mangle', 'raw', 'filter', 'nat'];

/** Byte-wise name order, as the kernel and libiptc keep user chains. */
export const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Each chain's rules in final order after the appends and inserts run in sequence on an empty table
 * (an insert at n lands at position n of the chain as it is at that moment).
 */
export function simulateChains(rules: readonly Rule[]): Map<string, Rule[]> {
  const chains = new Map<string, Rule[]>();
  for (const r of rules) {
    const list = chains.get(r.chain) ?? [];
    if (r.op.k === 'append') list.push(r);
    else list.splice(Math.min(r.op.position - 1, list.length), 0, r);
    chains.set(r.chain, list);
  }
  return chains;
}

/**
 * One table as `iptables-save` prints it after the plan is restored into an empty namespace, without the
 * `#` comment lines: `*table`, builtin chains with policy ACCEPT, our chains sorted by name, every rule
 * grouped by chain in the kernel's spelling, `COMMIT`.
 */
export function renderSaveTable(rules: readonly Rule[], table: Table, family: Family): string[] {
  const builtins = BUILTIN_CHAINS[table];
  const own = declaredChains(rules).filter((c) => !builtins.includes(c)).sort(byName);
  const chains = simulateChains(rules);
  const lines = [`*${table}`, ...builtins.map((c) => `:${c} ACCEPT [0:0]`), ...own.map((c) => `:${c} - [0:0]`)];
  for (const chain of [...builtins, ...own]) {
    for (const r of chains.get(chain) ?? []) lines.push(['-A', chain, ...formatSaveSpec(r, family)].join(' '));
  }
  lines.push('COMMIT');
  return lines;
}

/** Every table of one family that gets rules (with meshcap's ownership record), as `iptables-save` prints them. */
export function renderSaveFamily(plan: Plan, family: Family): string[] {
  const applied = appliedRules(plan);
  return SAVE_TABLE_ORDER.flatMap((table) => {
    const rules = rulesFor(applied, family, table);
    return rules.length === 0 ? [] : renderSaveTable(rules, table, family);
  });
}

/** The save-format dry-run: per family with rules, `# iptables-save` / `# ip6tables-save`, then its tables. */
export function renderSaveDryRun(plan: Plan): string {
  const lines: string[] = [];
  for (const family of plan.families) {
    const tables = renderSaveFamily(plan, family);
    if (tables.length === 0) continue;
    lines.push(family === 'ipv4' ? '# iptables-save' : '# ip6tables-save', ...tables);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

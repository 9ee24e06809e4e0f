import { declaredChains, rulesFor, TABLES } from '../model/chains.js';
import type { Family, Rule } from '../model/rule.js';
import type { Plan } from '../model/plan.js';
import { formatIstioSpec } from './spec.js';

/** `-A CHAIN spec…` or `-I CHAIN n spec…`, in Istio's spelling. */
export function formatRuleLine(rule: Rule, family: Family): string {
  const op = rule.op.k === 'append' ? ['-A', rule.chain] : ['-I', rule.chain, String(rule.op.position)];
  return [...op, ...formatIstioSpec(rule, family)].join(' ');
}

/**
 * The `iptables-restore --noflush` input for one family, as Istio renders it: per non-empty table in
 * alphabetical order, `* table` (with Istio's space), the `-N` lines, the rules in emission order, `COMMIT`.
 * Returns the lines; empty when the family has no rules.
 */
export function renderRestoreLines(plan: Plan, family: Family): string[] {
  const lines: string[] = [];
  for (const table of TABLES) {
    const rules = rulesFor(plan.rules, family, table);
    if (rules.length === 0) continue;
    lines.push(`* ${table}`);
    for (const chain of declaredChains(rules)) lines.push(`-N ${chain}`);
    for (const r of rules) lines.push(formatRuleLine(r, family));
    lines.push('COMMIT');
  }
  return lines;
}

export function renderRestore(plan: Plan, family: Family): string {
  const lines = renderRestoreLines(plan, family);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

import { BUILTIN_TARGETS } from './names.js';
import { appliesTo, jumpTarget, type Family, type Rule, type Table } from './rule.js';

/** Tables in the order Istio renders them (alphabetical). */
export const TABLES: readonly Table[] = ['filter', 'mangle', 'nat', 'raw'];

export function rulesFor(rules: readonly Rule[], family: Family, table?: Table): Rule[] {
  return rules.filter((r) => appliesTo(r, family) && (table === undefined || r.table === table));
}

/**
 * The chains a table's rules create (`-N`), as Istio derives them: chains holding rules in order of their
 * first rule, then chains only jumped to. Builtin chains and verdicts are never declared.
 */
export function declaredChains(tableRules: readonly Rule[]): string[] {
  const out: string[] = [];
  const add = (c: string | undefined) => {
    if (c !== undefined && !BUILTIN_TARGETS.has(c) && !out.includes(c)) out.push(c);
  };
  for (const r of tableRules) add(r.chain);
  for (const r of tableRules) add(jumpTarget(r));
  return out;
}

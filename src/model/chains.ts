import { appliesTo, jumpTarget, type Family, type Rule, type Table } from './rule.js';

/** Tables in the order Istio renders them (alphabetical). */
export const TABLES: readonly Table[] = ['filter', 'mangle', 'nat', 'raw'];

/** Builtin chains per table, in hook order, as iptables-save lists them. */
export const BUILTIN_CHAINS: Readonly<Record<Table, readonly string[]>> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
};

const BUILTIN_NAMES: ReadonlySet<string> = new Set(Object.values(BUILTIN_CHAINS).flat());

/** A builtin chain of `table`, or (without one) of any table: PREROUTING, INPUT, FORWARD, OUTPUT, POSTROUTING. */
export function isBuiltinChain(chain: string, table?: Table): boolean {
  return table === undefined ? BUILTIN_NAMES.has(chain) : BUILTIN_CHAINS[table].includes(chain);
}

/** Chains and verdicts that need no `-N` (Istio's builtin set). */
export const BUILTIN_TARGETS: ReadonlySet<string> = new Set([...BUILTIN_NAMES, 'ACCEPT', 'RETURN', 'DROP']);

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

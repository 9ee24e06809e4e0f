import { BUILTIN_TARGETS } from '../model/chains.js';
import { OWNED_CHAIN_PREFIX } from '../model/names.js';
import type { Plan } from '../model/plan.js';
import { appliesTo, jumpTarget, type Family } from '../model/rule.js';
import { formatIstioSpec } from './spec.js';

const CMD = { ipv4: 'iptables', ipv6: 'ip6tables' } as const;

/**
 * Istio's `--cleanup-only` command list for one family (istio-sidecar.md §9), derived from the rules: in
 * reverse order, each rule deleted — except rules inside ISTIO_* chains that jump nowhere of ours, which the
 * flush removes — then each of our chains flushed and deleted.
 */
export function renderIstioCleanup(plan: Plan, family: Family): string[] {
  const rules = plan.rules.filter((r) => appliesTo(r, family)).reverse();
  const out: string[] = [];
  const chains: string[] = [];
  for (const r of rules) {
    const inOurs = r.chain.startsWith(OWNED_CHAIN_PREFIX);
    if (!inOurs || jumpTarget(r)?.startsWith(OWNED_CHAIN_PREFIX)) {
      out.push([CMD[family], '-t', r.table, '-D', r.chain, ...formatIstioSpec(r, family)].join(' '));
    }
    const key = `${r.table} ${r.chain}`;
    if (!BUILTIN_TARGETS.has(r.chain) && !chains.includes(key)) chains.push(key);
  }
  for (const key of chains) {
    const [table, chain] = key.split(' ');
    out.push(`${CMD[family]} -t ${table} -F ${chain}`, `${CMD[family]} -t ${table} -X ${chain}`);
  }
  return out;
}

/** Istio's dry-run framing of `--cleanup-only`: the save probes, each family's commands, the final dumps. */
export function renderIstioCleanupDryRun(plan: Plan): string {
  const lines: string[] = ['iptables-save', 'ip6tables-save'];
  for (const family of plan.families) lines.push(...renderIstioCleanup(plan, family));
  for (const family of plan.families) lines.push(`${CMD[family]}-save`);
  return `${lines.join('\n')}\n`;
}

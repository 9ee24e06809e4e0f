import type { Family } from '../model/cidr.js';
import type { ParsedRule, ParsedTable } from '../inspect/types.js';
import { ruleText } from '../inspect/types.js';
import { isRecordChain } from '../model/ownership.js';
import { orderBaseChains, type Hook } from '../trace/base-chains.js';
import { describeEnd } from './leaves.js';
import type { GraphEdge, GraphNode, RuleGraph } from './model.js';

export type PurposeOf = (r: ParsedRule) => string | undefined;

const FAMILIES: readonly Family[] = ['ipv4', 'ipv6'];
const HOOKS: readonly Hook[] = ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'];
/** iptables' tables in the kernel's order, then native nft tables by name: the same picture whatever order a source listed them in. */
const IPTABLES_TABLES = ['raw', 'mangle', 'nat', 'filter'];
const BUILTIN_CHAINS = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

export const tableName = (t: ParsedTable): string => t.label ?? t.table;
export const chainId = (family: Family, table: string, chain: string): string => `${family}|${table}|${chain}`;
export const hookId = (family: Family, hook: string): string => `${family}|hook|${hook}`;
/** The end of a base chain (its policy), as the walk records it. */
export const policyText = (t: ParsedTable, chain: string): string => (t.label === undefined ? `-P ${chain} DROP` : 'policy drop');

function sortTables(tables: readonly ParsedTable[]): ParsedTable[] {
  const rank = (t: ParsedTable) => (t.label === undefined ? IPTABLES_TABLES.indexOf(t.table) : IPTABLES_TABLES.length);
  return [...tables].sort((a, b) => rank(a) - rank(b) || tableName(a).localeCompare(tableName(b)));
}

const dropsAtEnd = (t: ParsedTable, chain: string) => t.chains.find((c) => c.name === chain)?.policy === 'DROP';

class GraphBuilder {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges: GraphEdge[] = [];

  constructor(private readonly purposeOf: PurposeOf) {}

  node(n: GraphNode): string {
    if (!this.nodes.has(n.id)) this.nodes.set(n.id, n);
    return n.id;
  }

  /** One table's chains, from its entry chains along the jumps in rule order, then any other chain that holds or receives a rule. */
  addTable(t: ParsedTable): void {
    const byChain = new Map<string, ParsedRule[]>();
    for (const r of t.rules) byChain.set(r.chain, [...(byChain.get(r.chain) ?? []), r]);
    const declared = new Set(t.chains.map((c) => c.name));
    const entries = t.label === undefined ? BUILTIN_CHAINS : t.chains.filter((c) => c.base !== undefined).map((c) => c.name);
    const seen = new Set<string>();
    const visit = (chain: string, received: boolean) => {
      // meshcap's ISTIO_OWNED_* bookkeeping chains hold copies that no packet ever reaches: not drawn unless entered.
      if (seen.has(chain) || !(received || ((byChain.has(chain) || dropsAtEnd(t, chain)) && !isRecordChain(chain)))) return;
      seen.add(chain);
      this.addChain(t, chain, byChain.get(chain) ?? [], declared);
      for (const r of byChain.get(chain) ?? []) {
        const end = describeEnd(r.target, declared);
        if (end.k === 'chain') visit(end.chain, true);
      }
    };
    for (const chain of [...entries, ...t.chains.map((c) => c.name), ...byChain.keys()]) visit(chain, false);
  }

  private addChain(t: ParsedTable, chain: string, rules: readonly ParsedRule[], declared: ReadonlySet<string>): void {
    const table = tableName(t);
    const cluster = [t.family, table];
    const from = this.node({ id: chainId(t.family, table, chain), label: chain, kind: 'chain', cluster });
    for (const r of rules) {
      const end = describeEnd(r.target, declared);
      const to = end.k === 'chain' ? this.node({ id: chainId(t.family, table, end.chain), label: end.chain, kind: 'chain', cluster }) : this.node({ id: `${from}|${end.label}`, label: end.label, kind: end.kind, cluster });
      const purpose = this.purposeOf(r);
      const kind = end.k === 'chain' ? (end.goto ? 'goto' : 'jump') : 'rule';
      this.edges.push({ from, to, kind, label: `${r.position}: ${purpose ?? r.printed ?? r.spec}`, rule: ruleText(r), position: r.position });
    }
    if (dropsAtEnd(t, chain)) {
      const to = this.node({ id: `${from}|DROP`, label: 'DROP', kind: 'drop', cluster });
      this.edges.push({ from, to, kind: 'policy', label: 'policy DROP', rule: policyText(t, chain) });
    }
  }

  /** Each hook enters its base chains in priority order (the order trace walks them); a base chain that holds nothing is left out. */
  addHooks(family: Family, tables: readonly ParsedTable[]): void {
    const bases = orderBaseChains(tables, family).filter((b) => this.nodes.has(chainId(family, tableName(b.table), b.entry)));
    for (const hook of HOOKS) {
      bases
        .filter((b) => b.hook === hook)
        .forEach((b, i) => {
          const from = this.node({ id: hookId(family, hook), label: hook, kind: 'hook', cluster: [family] });
          this.edges.push({ from, to: chainId(family, tableName(b.table), b.entry), kind: 'hook', label: `${i + 1}. ${tableName(b.table)}, priority ${b.priority}` });
        });
    }
  }
}

/**
 * Rules → graph: per family, the hooks a first packet passes, entering each base chain in priority order as trace
 * walks them; every chain that holds or receives a rule (but meshcap's unreferenced ownership records); every rule as an edge (labelled with its purpose when it
 * is meshcap's, else its text) to the chain it enters or to the leaf of its verdict or effect. Pure; the same rules
 * give the same graph whatever order their source listed the tables in.
 */
export function buildRuleGraph(tables: readonly ParsedTable[], purposeOf: PurposeOf): RuleGraph {
  const b = new GraphBuilder(purposeOf);
  for (const family of FAMILIES) {
    const own = sortTables(tables.filter((t) => t.family === family));
    if (own.length === 0) continue;
    const hooksFirst = b.edges.length;
    for (const t of own) b.addTable(t);
    // Hooks first in the drawing: move their nodes ahead of the family's chains.
    const rules = b.edges.splice(hooksFirst);
    b.addHooks(family, own);
    b.edges.push(...rules);
  }
  const hooks = [...b.nodes.values()].filter((n) => n.kind === 'hook');
  const rest = [...b.nodes.values()].filter((n) => n.kind !== 'hook');
  return { title: [], nodes: [...hooks, ...rest], edges: b.edges, walk: false };
}

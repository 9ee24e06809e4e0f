/**
 * A rule set as a directed graph, ready to be written as DOT or Mermaid: hooks and chains as nodes, every rule
 * as an edge from its chain to the chain it jumps to or to the leaf of its verdict. Pure data, no layout.
 */

/** hook: a kernel hook; chain: a chain; the rest are leaves (what a rule's target does). */
export type NodeKind = 'hook' | 'chain' | 'capture' | 'pass' | 'drop' | 'effect' | 'unknown';

export interface GraphNode {
  /** Unique and stable: `ipv4|nat|ISTIO_OUTPUT`, `ipv4|hook|OUTPUT`, `ipv4|nat|ISTIO_OUTPUT|RETURN`. */
  readonly id: string;
  readonly label: string;
  readonly kind: NodeKind;
  /** The boxes the node is drawn in, outermost first: `['ipv4', 'nat']` (a hook: `['ipv4']`). */
  readonly cluster: readonly string[];
  /** On the traced walk (a trace picture). */
  readonly lit?: boolean;
}

/** hook: a hook enters a base chain; jump/goto: a rule enters a chain; rule: a rule's own verdict or effect; policy: a base chain's end. */
export type EdgeKind = 'hook' | 'jump' | 'goto' | 'rule' | 'policy';

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly kind: EdgeKind;
  /** The rule's position and purpose (`3: skip-proxy-owner`), or its text when the rule is not meshcap's. */
  readonly label: string;
  /** The whole rule as its source printed it (a tooltip); a policy edge: `-P OUTPUT DROP`. */
  readonly rule?: string;
  /** A rule edge: the rule's 1-based position in its chain. */
  readonly position?: number;
  /** On the traced walk (a trace picture). */
  readonly lit?: boolean;
  /** The walk's step numbers (1-based) that took this edge (a trace picture). */
  readonly steps?: readonly number[];
}

export interface RuleGraph {
  /** Lines drawn above the graph (a trace picture: the connection and its verdict). */
  readonly title: readonly string[];
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
  /** A trace picture: what is off the walk is dimmed. */
  readonly walk: boolean;
}

/** Clusters in first-use order, each as its path (`['ipv4']`, `['ipv4', 'nat']`). */
export function listClusters(graph: RuleGraph): string[][] {
  const seen = new Map<string, string[]>();
  for (const n of graph.nodes) {
    for (let depth = 1; depth <= n.cluster.length; depth++) {
      const path = n.cluster.slice(0, depth);
      const key = path.join('\u0000');
      if (!seen.has(key)) seen.set(key, path);
    }
  }
  return [...seen.values()];
}

import type { Step, TraceResult } from '../trace/result.js';
import { chainId } from './build.js';
import type { GraphEdge, RuleGraph } from './model.js';

/** The edge a step of the walk took: its rule's edge (by position), or its chain's policy edge. */
function findStepEdge(edges: readonly GraphEdge[], family: TraceResult['family'], step: Step): number {
  const from = chainId(family, step.table, step.chain);
  return edges.findIndex((e) => e.from === from && (step.position === undefined ? e.kind === 'policy' : e.position === step.position && e.kind !== 'hook' && e.kind !== 'policy'));
}

/**
 * A trace picture: the graph of the walked rules with the walk drawn on it — each step's edge numbered in
 * order, the chains and the verdict it reached lit, the hooks into those chains lit — and the title lines (the
 * connection, the verdict). Everything else is marked to be dimmed. Throws when a step has no edge (a bug).
 */
export function overlayWalk(graph: RuleGraph, result: TraceResult, title: readonly string[]): RuleGraph {
  const steps = new Map<number, number[]>();
  result.path.forEach((step, i) => {
    const at = findStepEdge(graph.edges, result.family, step);
    if (at < 0) throw new Error(`trace step ${i + 1} (${step.table} ${step.chain}: ${step.rule}) is not in the graph`);
    steps.set(at, [...(steps.get(at) ?? []), i + 1]);
  });
  const litNodes = new Set<string>();
  for (const at of steps.keys()) {
    const e = graph.edges[at];
    if (e !== undefined) litNodes.add(e.from).add(e.to);
  }
  const edges = graph.edges.map((e, i) => {
    const taken = steps.get(i);
    if (taken !== undefined) return { ...e, lit: true, steps: taken, label: `${taken.map((n) => `(${n})`).join(' ')} ${e.label}` };
    return e.kind === 'hook' && litNodes.has(e.to) ? { ...e, lit: true } : e;
  });
  for (const e of edges) if (e.lit === true) litNodes.add(e.from);
  const nodes = graph.nodes.map((n) => (litNodes.has(n.id) ? { ...n, lit: true } : n));
  return { title, nodes, edges, walk: true };
}

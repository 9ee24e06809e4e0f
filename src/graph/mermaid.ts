import { listClusters, type GraphEdge, type GraphNode, type NodeKind, type RuleGraph } from './model.js';
import { KIND_STYLE, WALK, wrapLabel } from './style.js';

/** Mermaid's entity codes for every character that could end a label or be read as markup. */
const ENTITIES: Record<string, string> = { '"': '#quot;', '#': '#35;', '<': '#lt;', '>': '#gt;', '&': '#amp;', '|': '#124;', '`': '#96;' };
const escape = (s: string): string => s.replace(/["#<>&|`]/g, (c) => ENTITIES[c] ?? c);
const label = (s: string): string => `"${wrapLabel(s).map(escape).join('<br>')}"`;

const ARROWS: Record<GraphEdge['kind'], string> = { hook: '==>', jump: '-->', goto: '-.->', rule: '-->', policy: '-.->' };

/** Mermaid ids: the node's id with every other character made `_`, numbered where two would meet. */
function assignIds(nodes: readonly GraphNode[]): Map<string, string> {
  const ids = new Map<string, string>();
  const used = new Set<string>();
  for (const n of nodes) {
    const base = `n_${n.id.replace(/[^A-Za-z0-9]+/g, '_')}`;
    let id = base;
    for (let i = 2; used.has(id); i++) id = `${base}_${i}`;
    used.add(id);
    ids.set(n.id, id);
  }
  return ids;
}

function clusterLines(graph: RuleGraph, ids: ReadonlyMap<string, string>): string[] {
  const clusters = listClusters(graph);
  const lines: string[] = [];
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  const emit = (path: readonly string[], depth: number) => {
    const pad = '  '.repeat(depth);
    lines.push(`${pad}subgraph cluster_${clusters.findIndex((c) => same(c, path))} [${label(path[path.length - 1] ?? '')}]`);
    for (const n of graph.nodes.filter((x) => same(x.cluster, path))) {
      const [open, close] = KIND_STYLE[n.kind].mermaid;
      lines.push(`${pad}  ${ids.get(n.id) ?? ''}${open}${label(n.label)}${close}`);
    }
    for (const child of clusters.filter((c) => c.length === path.length + 1 && path.every((x, i) => c[i] === x))) emit(child, depth + 1);
    lines.push(`${pad}end`);
  };
  for (const top of clusters.filter((c) => c.length === 1)) emit(top, 1);
  return lines;
}

function styleLines(graph: RuleGraph, ids: ReadonlyMap<string, string>): string[] {
  const kinds = Object.keys(KIND_STYLE) as NodeKind[];
  const lines = kinds.map((k) => `  classDef ${k} fill:${KIND_STYLE[k].fill},stroke:${KIND_STYLE[k].stroke}`);
  const groups = new Map<string, string[]>();
  for (const n of graph.nodes) {
    const cls = graph.walk && n.lit !== true ? 'dim' : n.kind;
    groups.set(cls, [...(groups.get(cls) ?? []), ids.get(n.id) ?? '']);
  }
  if (graph.walk) lines.push(`  classDef dim fill:${WALK.dimFill},stroke:${WALK.dimStroke},color:${WALK.dimText}`);
  for (const [cls, members] of groups) lines.push(`  class ${members.join(',')} ${cls}`);
  if (graph.walk) {
    const lit = graph.edges.flatMap((e, i) => (e.lit === true ? [i] : []));
    const dim = graph.edges.flatMap((e, i) => (e.lit === true ? [] : [i]));
    if (lit.length > 0) lines.push(`  linkStyle ${lit.join(',')} stroke:${WALK.lit},stroke-width:2.5px,color:${WALK.lit}`);
    if (dim.length > 0) lines.push(`  linkStyle ${dim.join(',')} stroke:${WALK.dimStroke},color:${WALK.dimText}`);
  }
  return lines;
}

/** The graph as a Mermaid `flowchart` (for Markdown and GitHub), left to right; byte-identical for the same graph. Pure. */
export function formatMermaid(graph: RuleGraph): string {
  const ids = assignIds(graph.nodes);
  const title = graph.title.length === 0 ? [] : ['---', `title: "${graph.title.join(' · ').replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`, '---'];
  const edges = graph.edges.map((e) => `  ${ids.get(e.from) ?? ''} ${ARROWS[e.kind]}|${label(e.label)}| ${ids.get(e.to) ?? ''}`);
  return [...title, 'flowchart LR', ...clusterLines(graph, ids), ...edges, ...styleLines(graph, ids), ''].join('\n');
}

import { listClusters, type GraphEdge, type GraphNode, type RuleGraph } from './model.js';
import { KIND_STYLE, WALK, wrapLabel } from './style.js';

/**
 * A DOT string: quotes and backslashes escaped, so nothing in a rule's text is read as DOT or as a label escape
 * (`\N`, `\l`), and `&` as `&amp;`, since Graphviz reads entities (`&amp;`) in strings.
 */
const escape = (s: string): string => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/&/g, '&amp;');
const quote = (s: string): string => `"${escape(s)}"`;
/** A wrapped label: each line escaped, joined by DOT's centred line break. */
const label = (s: string): string => `"${wrapLabel(s).map(escape).join('\\n')}"`;
const attrs = (a: Record<string, string | undefined>): string =>
  `[${Object.entries(a)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}]`;

function nodeLine(n: GraphNode, walk: boolean): string {
  const kind = KIND_STYLE[n.kind];
  const [shape, style] = kind.dot;
  const dim = walk && n.lit !== true;
  const colours = dim ? { color: quote(WALK.dimStroke), fontcolor: quote(WALK.dimText), fillcolor: quote(WALK.dimFill) } : { color: quote(kind.stroke), fillcolor: quote(kind.fill), penwidth: walk ? '2' : undefined };
  return `${quote(n.id)} ${attrs({ label: label(n.label), shape, style: quote(style), ...colours, class: walk ? (dim ? 'dim' : 'lit') : undefined })};`;
}

const EDGE_STYLE: Record<GraphEdge['kind'], Record<string, string>> = {
  hook: { color: quote(KIND_STYLE.hook.stroke), penwidth: '1.5' },
  jump: {},
  goto: { style: 'dashed' },
  rule: {},
  policy: { style: 'dotted' },
};

function edgeLine(e: GraphEdge, walk: boolean): string {
  const dim = walk && e.lit !== true;
  const colours = !walk ? {} : dim ? { color: quote(WALK.dimStroke), fontcolor: quote(WALK.dimText) } : { color: quote(WALK.lit), fontcolor: quote(WALK.lit), penwidth: '2.5' };
  const steps = e.steps?.map((n) => `step-${n}`).join(' ');
  return `${quote(e.from)} -> ${quote(e.to)} ${attrs({ label: label(e.label), tooltip: e.rule === undefined ? undefined : quote(e.rule), ...EDGE_STYLE[e.kind], ...colours, class: steps === undefined ? undefined : quote(steps) })};`;
}

/** Nodes nested in their clusters (family, then table), each cluster once, in first-use order. */
function clusterLines(graph: RuleGraph): string[] {
  const clusters = listClusters(graph);
  const lines: string[] = [];
  const emit = (path: readonly string[], depth: number) => {
    const pad = '  '.repeat(depth);
    const here = graph.nodes.filter((n) => n.cluster.length === path.length && n.cluster.every((c, i) => c === path[i]));
    const index = clusters.findIndex((c) => c.length === path.length && c.every((x, i) => x === path[i]));
    lines.push(`${pad}subgraph ${quote(`cluster_${index}`)} {`, `${pad}  label=${quote(path[path.length - 1] ?? '')}; style="rounded"; color="#999999"; fontcolor="#555555";`);
    for (const n of here) lines.push(`${pad}  ${nodeLine(n, graph.walk)}`);
    for (const child of clusters.filter((c) => c.length === path.length + 1 && path.every((x, i) => c[i] === x))) emit(child, depth + 1);
    lines.push(`${pad}}`);
  };
  for (const top of clusters.filter((c) => c.length === 1)) emit(top, 1);
  for (const n of graph.nodes.filter((x) => x.cluster.length === 0)) lines.push(`  ${nodeLine(n, graph.walk)}`);
  return lines;
}

/** The graph as Graphviz DOT, left to right; byte-identical for the same graph. Pure. */
export function formatDot(graph: RuleGraph): string {
  // The title's lines left-justified (DOT's `\l` ends each line).
  const title = graph.title.length === 0 ? [] : [`  label="${graph.title.map((l) => `${escape(l)}\\l`).join('')}"; labelloc="t"; labeljust="l";`];
  return [
    'digraph meshcap {',
    '  graph [rankdir="LR", fontname="Helvetica", fontsize="12", nodesep="0.2", ranksep="0.45"];',
    '  node [fontname="Helvetica", fontsize="11"];',
    '  edge [fontname="Helvetica", fontsize="9", arrowsize="0.7"];',
    ...title,
    ...clusterLines(graph),
    ...graph.edges.map((e) => `  ${edgeLine(e, graph.walk)}`),
    '}',
    '',
  ].join('\n');
}

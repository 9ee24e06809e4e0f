import type { PictureFormat } from '../config/trace.js';
import { formatDot } from './dot.js';
import { formatMermaid } from './mermaid.js';
import type { RuleGraph } from './model.js';

/** The graph in the asked format; SVG is laid out by Graphviz in-process, loaded only for `svg`. */
export async function drawGraph(graph: RuleGraph, format: PictureFormat): Promise<string> {
  if (format === 'mermaid') return formatMermaid(graph);
  const dot = formatDot(graph);
  return format === 'dot' ? dot : (await import('./svg.js')).renderSvg(dot);
}

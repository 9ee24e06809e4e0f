import { instance } from '@viz-js/viz';

/**
 * DOT → SVG in-process, by Graphviz compiled to WebAssembly (@viz-js/viz; its wasm is embedded in the JS, so
 * the Node bundle and the self-contained executable carry it). Only `--format svg` loads this module. Throws
 * Graphviz's first error for DOT it cannot lay out (meshcap's own DOT: a bug).
 */
let graphviz: ReturnType<typeof instance> | undefined;

export async function renderSvg(dot: string): Promise<string> {
  graphviz ??= instance();
  const viz = await graphviz;
  const result = viz.render(dot, { format: 'svg', engine: 'dot' });
  if (result.status !== 'success') throw new Error(`graphviz: ${result.errors.find((e) => e.level === 'error')?.message ?? 'could not render'}`);
  return result.output;
}

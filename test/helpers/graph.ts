import { execa } from 'execa';
import { JSDOM } from 'jsdom';

/** One drawn graph as Debian's Graphviz read and laid it out (`dot -Tjson`): node names, edges with their attributes. */
export interface LaidOut {
  readonly nodes: readonly { readonly name: string; readonly label: string }[];
  readonly edges: readonly { readonly tail: string; readonly head: string; readonly label: string; readonly tooltip: string | undefined; readonly class: string | undefined }[];
  readonly stderr: string;
}

interface DotJson {
  objects?: { _gvid: number; name: string; label?: string; nodes?: number[] }[];
  edges?: { tail: number; head: number; label?: string; tooltip?: string; class?: string }[];
}

/** Graphviz `dot` from Debian (the judge, not meshcap's renderer): lays the DOT out and hands back what it read. */
export async function layOut(dot: string): Promise<LaidOut> {
  const [one] = await layOutAll([dot]);
  return one as LaidOut;
}

/** Debian's Graphviz drawing the DOT as SVG. */
export async function renderWithDot(dot: string): Promise<string> {
  return (await execa('dot', ['-Tsvg'], { input: dot })).stdout;
}

/** Many graphs in one `dot` run (it lays out each graph of its input in turn and prints one JSON document each). */
export async function layOutAll(dots: readonly string[]): Promise<LaidOut[]> {
  if (dots.length === 0) return [];
  const r = await execa('dot', ['-Tjson'], { input: dots.join(''), reject: false });
  if (r.exitCode !== 0) throw new Error(`dot exited ${r.exitCode}: ${r.stderr}`);
  const docs = r.stdout.split(/^(?=\{$)/m).map((text) => JSON.parse(text) as DotJson);
  if (docs.length !== dots.length) throw new Error(`dot printed ${docs.length} graphs for ${dots.length}`);
  return docs.map((doc) => readDotJson(doc, r.stderr));
}

function readDotJson(doc: DotJson, stderr: string): LaidOut {
  const objects = doc.objects ?? [];
  const nodes = objects.filter((o) => o.nodes === undefined).map((o) => ({ name: o.name, label: o.label ?? '' }));
  const name = (id: number) => objects.find((o) => o._gvid === id)?.name ?? '';
  // Graphviz's JSON keeps the entities a DOT string carries (`&amp;`, as meshcap writes a rule's `&`).
  const text = (s: string | undefined) => s?.replace(/&amp;/g, '&');
  const edges = (doc.edges ?? []).map((e) => ({ tail: name(e.tail), head: name(e.head), label: text(e.label) ?? '', tooltip: text(e.tooltip), class: e.class }));
  return { nodes, edges, stderr };
}

let dom: JSDOM | undefined;
const window = () => (dom ??= new JSDOM('')).window;

/** An SVG document parsed as XML; throws when it is not well-formed. Returns the text of every <text> element, the class of every <g> and every link's tooltip. */
export function readSvg(svg: string): { texts: string[]; classes: string[]; tooltips: string[]; root: string } {
  const doc = new (window().DOMParser)().parseFromString(svg, 'image/svg+xml');
  const error = doc.getElementsByTagName('parsererror')[0];
  if (error !== undefined) throw new Error(`not well-formed SVG: ${error.textContent ?? ''}`);
  const classes = [...doc.getElementsByTagName('g')].map((g) => g.getAttribute('class') ?? '');
  const tooltips = [...doc.getElementsByTagName('a')].map((a) => a.getAttribute('xlink:title') ?? '');
  return { texts: [...doc.getElementsByTagName('text')].map((t) => t.textContent ?? ''), classes, tooltips, root: doc.documentElement.tagName };
}

type Mermaid = typeof import('mermaid').default;
let mermaid: Promise<Mermaid> | undefined;

/** Mermaid's own parser (it needs a DOM for its sanitiser: jsdom's window, set before mermaid loads). */
function loadMermaid(): Promise<Mermaid> {
  const g = globalThis as { window?: unknown; document?: unknown };
  g.window ??= window();
  g.document ??= window().document;
  mermaid ??= import('mermaid').then((m) => m.default);
  return mermaid;
}

interface FlowDb {
  getVertices(): Map<string, unknown>;
  getEdges(): unknown[];
  getSubGraphs(): unknown[];
}

/** Parses a flowchart with Mermaid (throws its parse error) and counts what it read. */
export async function parseMermaid(text: string): Promise<{ type: string; vertices: number; edges: number; subgraphs: number }> {
  const m = await loadMermaid();
  await m.parse(text);
  const diagram = await m.mermaidAPI.getDiagramFromText(text);
  const db = diagram.db as unknown as FlowDb;
  return { type: diagram.type, vertices: db.getVertices().size, edges: db.getEdges().length, subgraphs: db.getSubGraphs().length };
}

/** A trace picture's walk as Graphviz read it: the edges classed `step-N`, in step order, as `table chain: rule`. */
export function drawnSteps(laid: LaidOut): string[] {
  const steps = laid.edges.flatMap((e) =>
    (e.class ?? '')
      .split(' ')
      .filter((c) => /^step-\d+$/.test(c))
      .map((c) => {
        const [, table, chain] = e.tail.split('|');
        return { n: Number(c.slice(5)), text: `${table ?? ''} ${chain ?? ''}: ${e.tooltip ?? ''}` };
      }),
  );
  return steps.sort((a, b) => a.n - b.n).map((s) => s.text);
}

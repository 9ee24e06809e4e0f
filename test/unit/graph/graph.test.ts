import { describe, expect, it } from 'vitest';
import { parseSaveText } from '../../../src/inspect/save-text.js';
import { buildRuleGraph } from '../../../src/graph/build.js';
import { formatDot } from '../../../src/graph/dot.js';
import { formatMermaid } from '../../../src/graph/mermaid.js';
import { overlayWalk } from '../../../src/graph/walk-overlay.js';
import { wrapLabel } from '../../../src/graph/style.js';
import { layOut, parseMermaid, readSvg, renderWithDot } from '../../helpers/graph.js';

const none = () => undefined;
const tablesOf = (lines: readonly string[]) => parseSaveText(`${lines.join('\n')}\n`).tables;

describe('the rule graph', () => {
  it('leaves out the ownership records no packet enters, and draws one that a rule jumps into', () => {
    const records = tablesOf(['*nat', ':PREROUTING ACCEPT [0:0]', ':ISTIO_OWNED_PREROUTING - [0:0]', '-A PREROUTING -i eth9 -j RETURN', '-A ISTIO_OWNED_PREROUTING -i eth9 -j RETURN', 'COMMIT']);
    expect(buildRuleGraph(records, none).nodes.map((n) => n.id)).toEqual(['ipv4|hook|PREROUTING', 'ipv4|nat|PREROUTING', 'ipv4|nat|PREROUTING|RETURN']);
    const entered = tablesOf(['*nat', ':PREROUTING ACCEPT [0:0]', ':ISTIO_OWNED_PREROUTING - [0:0]', '-A PREROUTING -j ISTIO_OWNED_PREROUTING', '-A ISTIO_OWNED_PREROUTING -i eth9 -j RETURN', 'COMMIT']);
    expect(buildRuleGraph(entered, none).nodes.map((n) => n.id)).toContain('ipv4|nat|ISTIO_OWNED_PREROUTING');
  });

  it('orders each hook by priority whatever order the tables came in', () => {
    const nat = ['*nat', ':OUTPUT ACCEPT [0:0]', '-A OUTPUT -p tcp -j REDIRECT --to-ports 15001', 'COMMIT'];
    const mangle = ['*mangle', ':OUTPUT ACCEPT [0:0]', '-A OUTPUT -j MARK --set-xmark 0x539/0xfff', 'COMMIT'];
    const a = formatDot(buildRuleGraph(tablesOf([...nat, ...mangle]), none));
    expect(a).toBe(formatDot(buildRuleGraph(tablesOf([...mangle, ...nat]), none)));
    expect(a).toContain('"ipv4|hook|OUTPUT" -> "ipv4|mangle|OUTPUT" [label="1. mangle, priority -150"');
    expect(a).toContain('"ipv4|hook|OUTPUT" -> "ipv4|nat|OUTPUT" [label="2. nat, priority -100"');
    expect(a).toContain('label="MARK set 0x539/0xfff", shape=note');
  });

  it('keeps hostile rule text inside its labels in DOT and Mermaid', async () => {
    const rule = String.raw`-A OUTPUT -m comment --comment "x\" ] ; } -> | #quot; <b>&amp; \N \l \\ end" -j DROP`;
    const graph = buildRuleGraph(tablesOf(['*filter', ':OUTPUT ACCEPT [0:0]', rule, 'COMMIT']), none);
    const laid = await layOut(formatDot(graph));
    expect(laid.stderr).toBe('');
    // Graphviz shows the rule as it is: no label escape (\N, \l) expanded, no entity decoded, no quote lost.
    // (Its SVG tooltips undo one more backslash escape: `\\` shows there as `\`.)
    const { tooltips, texts } = readSvg(await renderWithDot(formatDot(graph)));
    expect(tooltips).toContain(rule.replace('\\\\', '\\'));
    expect(texts.join(' ')).toBe(`ipv4 filter OUTPUT OUTPUT 1. filter, priority 0 DROP 1: -m comment --comment "x\\" ] ; } -> | #quot; <b>&amp; \\N \\l \\\\ end" -j DROP`);
    expect(await parseMermaid(formatMermaid(graph))).toMatchObject({ vertices: laid.nodes.length, edges: laid.edges.length });
  });

  it('refuses to draw a walk step the graph does not hold', () => {
    const graph = buildRuleGraph(tablesOf(['*nat', ':OUTPUT ACCEPT [0:0]', '-A OUTPUT -j RETURN', 'COMMIT']), none);
    const step = { table: 'nat', chain: 'OUTPUT', rule: '-A OUTPUT -j RETURN', position: 2 };
    expect(() => overlayWalk(graph, { family: 'ipv4', verdict: { k: 'pass' }, path: [step] }, [])).toThrow(/step 1/);
    const drawn = overlayWalk(graph, { family: 'ipv4', verdict: { k: 'pass' }, path: [{ ...step, position: 1 }] }, ['title']);
    expect(drawn.edges.filter((e) => e.lit === true).map((e) => e.label)).toEqual(['1. nat, priority -100', '(1) 1: -j RETURN']);
  });

  it('wraps a label at spaces and keeps a long word whole', () => {
    expect(wrapLabel('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    expect(wrapLabel('a-very-long-word b', 4)).toEqual(['a-very-long-word', 'b']);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeHost, runCli } from '../helpers/cli.js';
import { CONFORMANCE_DIR } from '../helpers/paths.js';
import { layOut, parseMermaid, readSvg } from '../helpers/graph.js';
import { AMBIENT_CASES, AMBIENT_TPROXY_CASES } from './ambient-cases.js';
import { NFT_AMBIENT_CASES, NFT_SIDECAR_CASES } from './nft-cases.js';
import { CAPTURE_CASES, CNI_CASES } from './sidecar-cases.js';

/**
 * Every Istio golden drawn by `meshcap graph` from its mode's flags. The judges are not meshcap's: Debian's
 * Graphviz lays out every DOT, the chains and jumps expected are read from the golden's own text, the SVG is
 * parsed as XML, and Mermaid's own parser reads the flowchart.
 */
const GROUPS = fakeHost({ files: { '/etc/group': 'java:x:2001:\nftp:x:2002:\n' } });
const withoutDryRun = (argv: readonly string[]) => argv.filter((a) => a !== '-n');

const cases = [
  ...CAPTURE_CASES.map((c) => ({ ...c, file: `sidecar/${c.golden}.golden` })),
  ...CNI_CASES.map((c) => ({ ...c, file: `sidecar/cni-plugin/${c.golden}.txt.golden` })),
  ...AMBIENT_CASES.map((c) => ({ ...c, file: `ambient/${c.golden}.golden` })),
  ...AMBIENT_TPROXY_CASES.map((c) => ({ ...c, file: `ambient/${c.golden}.golden` })),
  ...NFT_SIDECAR_CASES.map((c) => ({ ...c, file: `sidecar/nftables/${c.golden}.golden` })),
  ...NFT_AMBIENT_CASES.map((c) => ({ ...c, file: `ambient/nftables/${c.golden}.golden` })),
];

/** What the golden's own text says: chains that hold or receive a rule, and chain-to-chain jumps, per table. */
function readGolden(text: string): { chains: Set<string>; jumps: Set<string> } {
  const chains = new Set<string>();
  const jumps = new Set<string>();
  let table = '';
  const declared = new Set<string>();
  for (const line of text.split('\n')) {
    const block = /^\* ?(\w+)$/.exec(line);
    if (block) table = block[1] ?? '';
    const n = /^-N (\S+)/.exec(line);
    if (n) declared.add(`${table} ${n[1]}`);
    const nftChain = /^add chain (\w+ \S+) (\S+)/.exec(line);
    if (nftChain) declared.add(`${nftChain[1]} ${nftChain[2]}`);
  }
  for (const line of text.split('\n')) {
    const block = /^\* ?(\w+)$/.exec(line);
    if (block) table = block[1] ?? '';
    const rule = /^-[AI] (\S+) (?:\d+ )?(.*)$/.exec(line);
    const nft = /^(?:add|insert) rule (\w+ \S+) (\S+) (?:index \d+ )?(.*)$/.exec(line);
    const [t, chain, rest] = rule ? [table, rule[1], rule[2]] : nft ? [nft[1], nft[2], nft[3]] : [];
    if (t === undefined || chain === undefined || rest === undefined) continue;
    chains.add(`${t} ${chain}`);
    const target = (rule ? / -[jg] (\S+)/.exec(` ${rest}`) : /\b(?:jump|goto) (\S+)/.exec(rest))?.[1];
    if (target !== undefined && declared.has(`${t} ${target}`)) {
      chains.add(`${t} ${target}`);
      jumps.add(`${t} ${chain} -> ${target}`);
    }
  }
  return { chains, jumps };
}

/** What the drawing holds, from Graphviz's reading of it (node names are `family|table|chain`, leaves one part more). */
function readDrawing(laid: Awaited<ReturnType<typeof layOut>>): { chains: Set<string>; jumps: Set<string>; hooked: Set<string> } {
  const chainOf = (name: string) => {
    const parts = name.split('|');
    return parts.length === 3 && parts[1] !== 'hook' ? `${parts[1]} ${parts[2]}` : undefined;
  };
  const chains = new Set(laid.nodes.flatMap((n) => chainOf(n.name) ?? []));
  const jumps = new Set(laid.edges.flatMap((e) => (chainOf(e.tail) !== undefined && chainOf(e.head) !== undefined ? [`${chainOf(e.tail)} -> ${(chainOf(e.head) ?? '').split(' ').at(-1)}`] : [])));
  const hooked = new Set(laid.edges.filter((e) => e.tail.split('|')[1] === 'hook').flatMap((e) => chainOf(e.head) ?? []));
  return { chains, jumps, hooked };
}

const totals = { cases: 0, chains: 0, jumps: 0, nodes: 0, edges: 0, svgBytes: 0 };
afterAll(() => {
  console.log(`graph conformance: ${totals.cases} goldens drawn; ${totals.chains} chains and ${totals.jumps} jumps of the goldens found in the drawings; ${totals.nodes} nodes and ${totals.edges} edges laid out by Graphviz; ${totals.svgBytes} bytes of SVG`);
});

describe('every Istio golden drawn by meshcap graph', () => {
  it('draws all 93 goldens of the conformance case tables', () => {
    expect(cases).toHaveLength(93);
  });

  it.each(cases)('$file: Graphviz lays out the DOT, every chain and jump of the golden is drawn, SVG and Mermaid read back', async (c) => {
    const argv = ['graph', ...withoutDryRun(c.argv)];
    const dot = await runCli(argv, c.env ?? {}, GROUPS);
    expect(dot.stderr).toBe('');
    expect(dot.code).toBe(0);
    const laid = await layOut(dot.stdout);
    expect(laid.stderr).toBe('');
    const golden = readGolden(readFileSync(join(CONFORMANCE_DIR, c.file), 'utf8'));
    const drawn = readDrawing(laid);
    expect(golden.chains.size).toBeGreaterThan(0);
    expect([...drawn.chains].sort()).toEqual([...golden.chains].sort());
    expect([...drawn.jumps].sort()).toEqual([...golden.jumps].sort());
    // Every base chain that holds a rule hangs off its hook (FORWARD is not on a first packet's way).
    // Every rule is meshcap's own: each edge is labelled with its purpose, none with its text.
    expect(laid.edges.filter((e) => e.tooltip !== undefined && !/^\d+: [a-z0-9-]+$/.test(e.label)).map((e) => `${e.tooltip}: ${e.label}`)).toEqual([]);
    const bases = [...drawn.chains].filter((ch) => /^(\w+ )?(\S+ )?(PREROUTING|INPUT|OUTPUT|POSTROUTING|prerouting|input|output|postrouting)$/.test(ch));
    expect(bases.filter((b) => !drawn.hooked.has(b))).toEqual([]);

    const svg = await runCli([...argv, '--format', 'svg'], c.env ?? {}, GROUPS);
    expect(svg.code).toBe(0);
    const { texts, root } = readSvg(svg.stdout);
    expect(root).toBe('svg');
    const chainNames = [...golden.chains].map((ch) => ch.split(' ').at(-1) ?? '');
    expect(chainNames.filter((name) => !texts.includes(name))).toEqual([]);

    const mmd = await runCli([...argv, '--format', 'mermaid'], c.env ?? {}, GROUPS);
    expect(mmd.code).toBe(0);
    const read = await parseMermaid(mmd.stdout);
    expect(read).toMatchObject({ type: 'flowchart-v2', vertices: laid.nodes.length, edges: laid.edges.length });

    totals.cases += 1;
    totals.chains += golden.chains.size;
    totals.jumps += golden.jumps.size;
    totals.nodes += laid.nodes.length;
    totals.edges += laid.edges.length;
    totals.svgBytes += svg.stdout.length;
  });
});

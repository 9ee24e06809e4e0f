import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { drawnSteps, layOut, parseMermaid, readSvg } from '../../helpers/graph.js';
import { entryCommand, IMPL, REPO_ROOT } from '../../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../../helpers/plan.js';

const dir = mkdtempSync(join(tmpdir(), 'meshcap-graph-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dump = join(dir, 'pod.save');
const nftDump = join(dir, 'pod.nft');
const APP_FLOW = ['--dst', '203.0.113.10', '--dport', '443', '--uid', '1000'];

beforeAll(async () => {
  writeFileSync(dump, (await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'on'])).stdout);
  writeFileSync(nftDump, (await runCli(['--native-nftables', '-n', ...ISTIO_INIT_ARGS, '--ipv6', 'off'])).stdout);
});

/** The built program (the Node bundle, or the executable under MESHCAP_IMPL=bin) as a process. */
async function meshcap(args: readonly string[], input?: string) {
  const { file, args: pre } = entryCommand();
  return execa(file, [...pre, ...args], { reject: false, stripFinalNewline: false, ...(input === undefined ? {} : { input }) });
}

describe('meshcap graph input', () => {
  it.each([
    [['graph', '--rules', '/nonexistent/pod.save'], '--rules'],
    [['graph', '--rules', ''], '--rules'],
    [['graph', '--rules', '/dev/null'], '--rules'],
    [['graph', '--format', 'png', '-p', '15001'], '--format'],
    [['graph', '--rules', '/dev/null', '--netns', '/run/netns/x'], '--rules'],
    [['graph', '--rules', '/dev/null', '-p', '15001'], '--rules'],
    [['graph', '-p', '15001', '--verify'], '--verify'],
    [['graph', '-p', '15001', '--cleanup-only'], '--cleanup-only'],
    [['graph', '-p', 'x'], '-p'],
    [['graph', 'lint', 'pod.yaml'], 'mode flags'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '80', '--format', 'png'], '--format'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '80', '--format', 'dot', '--json'], '--format'],
  ])('exits 2 on %j with one line naming %s', async (argv, flag) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(flag);
    expect(r.stdout).toBe('');
    expect(r.commands).toEqual([]);
  });

  it('names the line of a dump it cannot read', async () => {
    writeFileSync(join(dir, 'bad.save'), '*nat\n:OUTPUT ACCEPT [0:0]\nthis is not a rule\nCOMMIT\n');
    const r = await runCli(['graph', '--rules', join(dir, 'bad.save')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('line 3');
  });

  it('exits 5 when the namespace does not exist', async () => {
    const r = await runCli(['graph', '--netns', '/run/netns/meshcap-graph-gone']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('/run/netns/meshcap-graph-gone');
  });

  it(`exits 2 with one line for an unknown format and an unreadable dump (${IMPL} build)`, async () => {
    for (const args of [['graph', '--format', 'png', '--rules', dump], ['graph', '--rules', join(dir, 'missing.save')]]) {
      const r = await meshcap(args);
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

describe('meshcap graph output', () => {
  it('draws both families of a dump, with the same bytes every time and whatever order the families came in', async () => {
    const a = await runCli(['graph', '--rules', dump]);
    const b = await runCli(['graph', '--rules', dump]);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).toContain('"ipv4|nat|ISTIO_OUTPUT"');
    expect(a.stdout).toContain('"ipv6|nat|ISTIO_OUTPUT"');
    const [v4, v6] = (await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'on'])).stdout.split('# ip6tables-save\n');
    writeFileSync(join(dir, 'swapped.save'), `# ip6tables-save\n${v6 ?? ''}${v4 ?? ''}`);
    expect((await runCli(['graph', '--rules', join(dir, 'swapped.save')])).stdout).toBe(a.stdout);
  });

  it('draws the plan of a mode\'s flags as the graph of its dry-run dump, read from stdin', async () => {
    const plan = await runCli(['graph', ...ISTIO_INIT_ARGS, '--ipv6', 'on']);
    const viaStdin = await meshcap(['graph', '--rules', '-'], (await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'on'])).stdout);
    expect(plan.code).toBe(0);
    expect(viaStdin.exitCode).toBe(0);
    expect(viaStdin.stdout).toBe(plan.stdout);
  });

  it('labels a foreign rule with its text and draws a goto, a drop policy and a jump to a missing chain', async () => {
    const text = ['*filter', ':INPUT ACCEPT [0:0]', ':OUTPUT DROP [0:0]', ':CUSTOM - [0:0]', '-A OUTPUT -d 192.0.2.9/32 -m comment --comment "a \\"quoted\\" note" -g CUSTOM', '-A OUTPUT -j NOWHERE', '-A CUSTOM -j ACCEPT', 'COMMIT', ''].join('\n');
    writeFileSync(join(dir, 'foreign.save'), text);
    const r = await runCli(['graph', '--rules', join(dir, 'foreign.save')]);
    expect(r.code).toBe(0);
    const laid = await layOut(r.stdout);
    expect(laid.stderr).toBe('');
    // Graphviz hands labels back as DOT spelled them: line breaks as \n, quotes escaped.
    const edges = laid.edges.map((e) => `${e.tail} -> ${e.head}: ${e.label.replace(/\\n/g, ' ').replace(/\\(["\\])/g, '$1')}`);
    expect(edges).toEqual([
      'ipv4|hook|OUTPUT -> ipv4|filter|OUTPUT: 1. filter, priority 0',
      'ipv4|filter|OUTPUT -> ipv4|filter|CUSTOM: 1: -d 192.0.2.9/32 -m comment --comment "a \\"quoted\\" note" -g CUSTOM',
      'ipv4|filter|OUTPUT -> ipv4|filter|OUTPUT|NOWHERE (not followed by trace): 2: -j NOWHERE',
      'ipv4|filter|OUTPUT -> ipv4|filter|OUTPUT|DROP: policy DROP',
      'ipv4|filter|CUSTOM -> ipv4|filter|CUSTOM|ACCEPT: 1: -j ACCEPT',
    ]);
    const mmd = await runCli(['graph', '--rules', join(dir, 'foreign.save'), '--format', 'mermaid']);
    expect(await parseMermaid(mmd.stdout)).toMatchObject({ vertices: laid.nodes.length, edges: laid.edges.length });
  });

  it('draws native nft tables by base chain and priority, with the purposes of meshcap\'s nft rules', async () => {
    const r = await runCli(['graph', '--rules', nftDump]);
    expect(r.code).toBe(0);
    const laid = await layOut(r.stdout);
    expect(laid.edges.filter((e) => e.tail === 'ipv4|hook|OUTPUT').map((e) => `${e.head}: ${e.label}`)).toEqual(['ipv4|inet istio-proxy-nat|output: 1. inet istio-proxy-nat, priority -100']);
    expect(laid.edges.find((e) => e.tail === 'ipv4|inet istio-proxy-nat|istio-redirect')?.label).toBe('1: redirect-outbound');
  });

  it(`renders well-formed SVG in-process that names every chain (${IMPL} build)`, async () => {
    const started = performance.now();
    const r = await meshcap(['graph', ...ISTIO_INIT_ARGS, '--ipv6', 'on', '--format', 'svg']);
    const ms = Math.round(performance.now() - started);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    const { root, texts } = readSvg(r.stdout);
    expect(root).toBe('svg');
    for (const chain of ['PREROUTING', 'OUTPUT', 'ISTIO_INBOUND', 'ISTIO_IN_REDIRECT', 'ISTIO_OUTPUT', 'ISTIO_REDIRECT']) expect(texts).toContain(chain);
    console.log(`graph --format svg (${IMPL}): ${r.stdout.length} bytes in ${ms} ms`);
  });
});

describe('the Node build carries Graphviz beside the bundle', () => {
  it('runs istio-init without dist/lib/viz.cjs; only --format svg needs it', async () => {
    const copy = join(dir, 'dist');
    cpSync(join(REPO_ROOT, 'dist'), copy, { recursive: true, filter: (src) => !src.includes(`${join('dist', 'bin')}`) });
    rmSync(join(copy, 'lib', 'viz.cjs'));
    const run = (args: readonly string[]) => execa(process.execPath, [join(copy, 'meshcap.cjs'), ...args], { reject: false });
    const dry = await run(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'off']);
    expect(dry.exitCode).toBe(0);
    expect(dry.stdout).toContain('-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001');
    expect((await run(['graph', ...ISTIO_INIT_ARGS, '--ipv6', 'off'])).exitCode).toBe(0);
    const svg = await run(['graph', ...ISTIO_INIT_ARGS, '--ipv6', 'off', '--format', 'svg']);
    expect(svg.exitCode).toBe(1);
    expect(svg.stderr).toContain('viz.cjs');
  });
});

describe('meshcap trace --format', () => {
  it('draws the walk step for step on the graph, and the rest dimmed', async () => {
    const json = JSON.parse((await runCli(['trace', '--rules', dump, ...APP_FLOW, '--json'])).stdout) as { path: { table: string; chain: string; rule: string }[] };
    const r = await runCli(['trace', '--rules', dump, ...APP_FLOW, '--format', 'dot']);
    expect(r.code).toBe(0);
    const laid = await layOut(r.stdout);
    expect(drawnSteps(laid)).toEqual(json.path.map((s) => `${s.table} ${s.chain}: ${s.rule}`));
    expect(json.path).toHaveLength(3);
    expect(r.stdout).toContain('verdict: redirected to local port 15001 (Envoy outbound)');
    expect(r.stdout).toMatch(/"ipv4\|nat\|ISTIO_INBOUND" \[[^\]]*class=dim/);
    const mmd = await runCli(['trace', '--rules', dump, ...APP_FLOW, '--format', 'mermaid']);
    expect((await parseMermaid(mmd.stdout)).edges).toBe(laid.edges.length);
  });

  it(`renders the walk as SVG through the built program (${IMPL} build)`, async () => {
    const r = await meshcap(['trace', '--rules', dump, ...APP_FLOW, '--format', 'svg']);
    expect(r.exitCode).toBe(0);
    const { texts } = readSvg(r.stdout);
    expect(texts.some((t) => t.includes('verdict: redirected to local port 15001'))).toBe(true);
    expect(readSvg(r.stdout).classes.filter((c) => c.includes('step-'))).toEqual(['edge step-1', 'edge step-2', 'edge step-3']);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { meshcapIn } from '../helpers/meshcap.js';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { entryCommand, IMPL } from '../helpers/paths.js';

requireRoot();

/**
 * `meshcap graph --netns` reads a namespace through the one namespace reader; it must draw exactly what
 * `meshcap graph --rules` draws for the namespace's own dump (iptables-save of both families, or nft list
 * ruleset, text and JSON), byte for byte — with meshcap's rules and foreign ones side by side.
 */
const SIDECAR_TPROXY = ['-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'TPROXY', '-b', '*', '-i', '*', '-x', '192.0.2.0/24', '--ipv6', 'on'];
const AMBIENT = ['ambient', '--inbound', 'redirect', '--redirect-dns', '--ipv6', 'on'];
const NFT_SIDECAR = ['--native-nftables', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-b', '8080', '-i', '*', '--redirect-dns', '--ipv6', 'on'];

const dir = mkdtempSync(join(tmpdir(), 'meshcap-graph-live-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function graph(args: readonly string[]) {
  const { file, args: pre } = entryCommand();
  const r = await execa(file, [...pre, 'graph', ...args], { reject: false, stripFinalNewline: false });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return r.stdout;
}

async function graphOfDump(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  writeFileSync(file, text);
  return graph(['--rules', file]);
}

describe(`graph --netns equals graph --rules of the namespace's dump (${IMPL} build)`, () => {
  let ns: Netns | undefined;
  beforeEach(async () => {
    ns = await createNetns('mcgraph');
    await ns.run('ip', ['link', 'set', 'lo', 'up']);
  });
  afterEach(async () => {
    await deleteNetns(ns);
  });

  for (const backend of ['nft', 'legacy'] as const) {
    it(`draws sidecar TPROXY and foreign rules alike from the ${backend} backend, both families`, async () => {
      const pod = ns as Netns;
      expect((await meshcapIn(pod, [...SIDECAR_TPROXY, '--force-iptables-binary', backend])).exitCode).toBe(0);
      await pod.run(`iptables-${backend}`, ['-t', 'nat', '-I', 'OUTPUT', '1', '-d', '192.0.2.77/32', '-m', 'comment', '--comment', 'keep "this" <one>', '-j', 'RETURN']);
      await pod.run(`ip6tables-${backend}`, ['-t', 'filter', '-A', 'OUTPUT', '-d', '2001:db8::77/128', '-j', 'DROP']);
      const live = await graph(['--netns', pod.path]);
      const v4 = (await pod.run(`iptables-${backend}-save`, [])).stdout;
      const v6 = (await pod.run(`ip6tables-${backend}-save`, [])).stdout;
      expect(await graphOfDump(`sidecar-${backend}.save`, `${v4}\n${v6}\n`)).toBe(live);
      for (const drawn of ['"ipv4|mangle|ISTIO_TPROXY"', '"ipv6|nat|ISTIO_OUTPUT"', 'tooltip="-A OUTPUT -d 192.0.2.77/32 -m comment', '<one>', '"ipv6|filter|OUTPUT|DROP"', 'skip-proxy-owner']) expect(live).toContain(drawn);
    });
  }

  it('draws ambient in-pod rules live as from the dump', async () => {
    const pod = ns as Netns;
    expect((await meshcapIn(pod, AMBIENT)).exitCode).toBe(0);
    const live = await graph(['--netns', pod.path]);
    const dump = `${(await pod.run('iptables-save', [])).stdout}\n${(await pod.run('ip6tables-save', [])).stdout}\n`;
    expect(await graphOfDump('ambient.save', dump)).toBe(live);
    expect(live).toContain('"ipv4|mangle|ISTIO_PRERT"');
    expect(await graph(AMBIENT)).toBe(live);
  });

  it('draws native nftables tables live as from nft list ruleset, text and JSON', async () => {
    const pod = ns as Netns;
    expect((await meshcapIn(pod, NFT_SIDECAR)).exitCode).toBe(0);
    const live = await graph(['--netns', pod.path]);
    expect(await graphOfDump('pod.nft', (await pod.run('nft', ['list', 'ruleset'])).stdout)).toBe(live);
    expect(await graphOfDump('pod.json', (await pod.run('nft', ['-j', 'list', 'ruleset'])).stdout)).toBe(live);
    expect(live).toContain('"ipv6|inet istio-proxy-nat|istio-output-dns"');
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'meshcap-nft-trace-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function nftDump(argv: readonly string[]): Promise<string> {
  const dry = await runCli([...argv]);
  expect(dry.code).toBe(0);
  const file = join(dir, `${argv.join('_').replace(/[^a-z0-9]+/gi, '_')}.list`);
  writeFileSync(file, dry.stdout);
  return file;
}

describe('meshcap trace --rules on an nft list ruleset dump', () => {
  it('shows the nft rules as nft prints them, with their purpose, and the verdict', async () => {
    const file = await nftDump(['-n', '--native-nftables', '-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-i', '*', '-b', '*', '--ipv6', 'on']);
    const r = await runCli(['trace', '--rules', file, '--dst', '2001:db8::2', '--dport', '8080', '--direction', 'inbound']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('rules: native nftables (inet istio-proxy-nat, inet istio-proxy-mangle)');
    expect(r.stdout).toMatch(/inet istio-proxy-mangle istio-tproxy +meta l4proto tcp ip6 daddr != ::1 tproxy ip6 to :15006 meta mark set 0x00000539 counter accept {3}\[tproxy-inbound\]/);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('verdict: sent to local port 15006 through TPROXY (Envoy inbound)');
  });

  it('prints the same --json schema, tables named by family and name', async () => {
    const file = await nftDump(['ambient', '-n', '--native-nftables', '--inbound', 'redirect', '--ipv6', 'off']);
    const r = await runCli(['trace', '--rules', file, '--dst', '203.0.113.9', '--dport', '443', '--json']);
    const out = JSON.parse(r.stdout) as { verdict: string; port: number; family: string; path: { table: string; chain: string; rule: string }[] };
    expect(Object.keys(out)).toEqual(['verdict', 'port', 'family', 'path']);
    expect(out).toMatchObject({ verdict: 'redirect', port: 15001, family: 'ipv4' });
    expect(out.path.find((s) => s.rule.endsWith('redirect to :15001'))).toMatchObject({ table: 'inet istio-ambient-nat', chain: 'istio-output' });
  });

  it('reads an nft -j list ruleset dump as well, to the same verdict', async () => {
    const fixture = join(import.meta.dirname, '../../fixtures/nft-json');
    const args = ['--dst', '203.0.113.9', '--dport', '443', '--uid', '1000', '--json'];
    const fromJson = await runCli(['trace', '--rules', join(fixture, 'sidecar-tproxy.json'), ...args]);
    const fromText = await runCli(['trace', '--rules', join(fixture, 'sidecar-tproxy.list'), ...args]);
    expect(JSON.parse(fromJson.stdout)).toMatchObject({ verdict: 'redirect', port: 15001 });
    expect(fromJson.stdout).toBe(fromText.stdout);
  });

  it('answers unknown, naming the rule, for an nft statement it cannot follow', async () => {
    const file = join(dir, 'foreign.list');
    writeFileSync(file, 'table inet x {\n\tchain output {\n\t\ttype nat hook output priority -100; policy accept;\n\t\tmeta l4proto tcp fib daddr type local counter packets 0 bytes 0 redirect to :15001\n\t}\n}\n');
    const r = await runCli(['trace', '--rules', file, '--dst', '203.0.113.9', '--dport', '443']);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('verdict: unknown: inet x output: meta l4proto tcp fib daddr type local counter redirect to :15001: it has a match trace cannot evaluate');
  });
});

import { describe, expect, it } from 'vitest';
import type { Family } from '../../../src/model/rule.js';
import type { Runner } from '../../../src/exec/runner.js';
import { readNamespaceRules, walkedRules } from '../../../src/inspect/namespace-rules.js';
import { ok, scripted } from '../../helpers/scripted-runner.js';

const RULES = '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -j RETURN\nCOMMIT\n';
const EMPTY_TABLE = '*nat\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n';

/** What trace reads: one family, no native nftables tables. */
const walk = async (runner: Runner, family: Family) => walkedRules(await readNamespaceRules(runner, { families: [family], nftTables: false }), family);

describe('reading the rules a walk covers', () => {
  it('walks legacy when legacy holds rules, and says nft holds rules too', async () => {
    const r = await walk(scripted({ 'iptables-legacy-save': ok(RULES), 'iptables-nft-save': ok(RULES) }), 'ipv4');
    expect(r.rules.backend).toBe('legacy');
    expect(r.alsoHeld).toBe('nft');
  });

  it('walks nft when the legacy save prints fewer than three lines', async () => {
    const r = await walk(scripted({ 'iptables-legacy-save': ok('# Warning: iptables-nft tables present\n'), 'iptables-nft-save': ok(RULES) }), 'ipv4');
    expect(r).toMatchObject({ rules: { backend: 'nft' }, alsoHeld: undefined });
    expect(r.rules.tables[0]?.rules).toHaveLength(1);
  });

  it('walks legacy, as apply would choose it, when its save has three lines though no rule', async () => {
    const r = await walk(scripted({ 'iptables-legacy-save': ok(EMPTY_TABLE), 'iptables-nft-save': ok(RULES) }), 'ipv4');
    expect(r).toMatchObject({ rules: { backend: 'legacy' }, alsoHeld: 'nft' });
    expect(r.rules.tables[0]?.rules).toHaveLength(0);
  });

  it('walks plain iptables-save, as apply would, when legacy holds nothing and nft cannot run', async () => {
    const runner = scripted({ 'iptables-legacy-save': ok(), 'iptables-save': ok(RULES) });
    const r = await walk(runner, 'ipv4');
    expect(r).toMatchObject({ rules: { backend: 'plain' }, alsoHeld: undefined });
    expect(r.rules.tables[0]?.rules).toHaveLength(1);
    expect(runner.calls).toContain('iptables-save');
  });

  it('walks ip6tables-legacy for IPv6 when its save holds a table (a DROP policy, no rule)', async () => {
    const r = await walk(scripted({ 'ip6tables-legacy-save': ok('*filter\n:INPUT DROP [0:0]\nCOMMIT\n'), 'ip6tables-nft-save': ok() }), 'ipv6');
    expect(r.rules.backend).toBe('legacy');
  });

  it('fails with the command when no save works', async () => {
    await expect(walk(scripted({}), 'ipv4')).rejects.toThrow(/iptables-save failed/);
  });
});

describe('reading every backend', () => {
  it('parses each backend and family that saves, lists the native tables, and names what could not run', async () => {
    const runner = scripted({ 'iptables-nft-save': ok(RULES), 'ip6tables-nft-save': ok(EMPTY_TABLE), 'nft -j list ruleset': ok('{"nftables":[{"table":{"family":"inet","name":"istio-proxy-nat"}}]}') });
    const r = await readNamespaceRules(runner, { families: ['ipv4', 'ipv6'], nftTables: true });
    expect(r.iptables.map((b) => `${b.backend} ${b.family} ${b.tables.map((t) => `${t.family} ${t.table}`).join()}`)).toEqual(['nft ipv4 ipv4 nat', 'nft ipv6 ipv6 nat']);
    expect(r.nftTables).toEqual([{ family: 'inet', name: 'istio-proxy-nat' }]);
    expect(r.unreadable).toEqual(['iptables-legacy-save: iptables-legacy-save: command not found', 'ip6tables-legacy-save: ip6tables-legacy-save: command not found']);
    expect(runner.calls).not.toContain('iptables-save');
  });
});

describe("reading a namespace's native nftables rules for trace", () => {
  const json = JSON.stringify({
    nftables: [
      { table: { family: 'inet', name: 'istio-proxy-nat', handle: 1 } },
      { table: { family: 'ip', name: 'nat', handle: 2 } },
      { chain: { family: 'inet', table: 'istio-proxy-nat', name: 'output', handle: 1, type: 'nat', hook: 'output', prio: -100, policy: 'accept' } },
      { rule: { family: 'inet', table: 'istio-proxy-nat', chain: 'output', handle: 2, expr: [{ match: { op: '==', left: { meta: { key: 'skuid' } }, right: 1337 } }, { counter: { packets: 0, bytes: 0 } }, { return: null }] } },
    ],
  });

  it('takes the rules from the one nft -j list ruleset it runs, and lists the table names too', async () => {
    const runner = scripted({ 'iptables-legacy-save': ok(), 'iptables-nft-save': ok(), 'nft -j list ruleset': ok(json) });
    const r = await readNamespaceRules(runner, { families: ['ipv4'], nftTables: true, nftRules: true });
    expect(r.nftTables.map((t) => t.name)).toEqual(['istio-proxy-nat', 'nat']);
    expect(r.nftRules?.tables.map((t) => `${t.family} ${t.label ?? ''}`)).toEqual(['ipv4 inet istio-proxy-nat', 'ipv6 inet istio-proxy-nat']);
    expect(r.nftRules?.tables[0]?.rules.map((x) => x.printed)).toEqual(['meta skuid 1337 counter return']);
    expect(runner.calls.filter((c) => c.startsWith('nft'))).toEqual(['nft -j list ruleset']);
  });

  it('reads no nft rules unless asked, and reports nft that cannot run', async () => {
    const quiet = await readNamespaceRules(scripted({ 'nft -j list ruleset': ok(json) }), { families: ['ipv4'], nftTables: true });
    expect(quiet.nftRules).toBeUndefined();
    const broken = await readNamespaceRules(scripted({ 'nft -j list ruleset': { exitCode: 1, stdout: '', stderr: 'nft: Operation not permitted' } }), { families: ['ipv4'], nftTables: false, nftRules: true });
    expect(broken.nftRules).toBeUndefined();
    expect(broken.unreadable).toContain('nft: nft: Operation not permitted');
  });
});

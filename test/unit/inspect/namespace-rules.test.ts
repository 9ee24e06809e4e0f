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

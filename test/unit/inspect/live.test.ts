import { describe, expect, it } from 'vitest';
import { readLiveRules, readSetMembers, routeGet } from '../../../src/inspect/live.js';
import type { RunResult, Runner } from '../../../src/exec/runner.js';

const ok = (stdout = ''): RunResult => ({ exitCode: 0, stdout, stderr: '' });
const RULES = '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -j RETURN\nCOMMIT\n';
const EMPTY_TABLE = '*nat\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n';

function scripted(answers: Record<string, RunResult>): Runner & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    run: async (cmd, args) => {
      const line = [cmd, ...args].join(' ');
      calls.push(line);
      return answers[line] ?? answers[cmd] ?? { exitCode: 127, stdout: '', stderr: `${cmd}: command not found` };
    },
  };
}

describe('reading live rules', () => {
  it('walks legacy when legacy holds rules, and says nft holds rules too', async () => {
    const r = await readLiveRules(scripted({ 'iptables-legacy-save': ok(RULES), 'iptables-nft-save': ok(RULES) }), 'ipv4');
    expect(r.backend).toBe('legacy');
    expect(r.alsoHeld).toBe('nft');
  });

  it('walks nft when legacy holds only empty tables', async () => {
    const r = await readLiveRules(scripted({ 'iptables-legacy-save': ok(EMPTY_TABLE), 'iptables-nft-save': ok(RULES) }), 'ipv4');
    expect(r).toMatchObject({ backend: 'nft', alsoHeld: undefined });
    expect(r.ruleset.tables[0]?.rules).toHaveLength(1);
  });

  it('counts a DROP policy as rules', async () => {
    const r = await readLiveRules(scripted({ 'ip6tables-legacy-save': ok('*filter\n:INPUT DROP [0:0]\nCOMMIT\n'), 'ip6tables-nft-save': ok() }), 'ipv6');
    expect(r.backend).toBe('legacy');
  });

  it('fails with the command when no save works', async () => {
    await expect(readLiveRules(scripted({}), 'ipv4')).rejects.toThrow(/iptables-save failed/);
  });
});

describe('reading sets and routes', () => {
  it('reads address and network members, and drops a set with members that are not addresses', async () => {
    const save = ['create a hash:ip family inet', 'add a 198.51.100.2', 'create b hash:net family inet', 'add b 203.0.113.0/24', 'create c hash:ip,port family inet', 'add c 198.51.100.2,tcp:80'].join('\n');
    const sets = await readSetMembers(scripted({ 'ipset save': ok(save) }), ['a', 'b', 'c']);
    expect([...(sets?.keys() ?? [])]).toEqual(['a', 'b']);
    expect(sets?.get('b')?.[0]?.prefix).toBe(24);
  });

  it('reports sets as unreadable when ipset cannot run', async () => {
    expect(await readSetMembers(scripted({}), ['a'])).toBeUndefined();
  });

  it('takes device, source and locality from ip route get', async () => {
    const json = '[{"type":"local","dst":"198.51.100.2","dev":"lo","table":"local","prefsrc":"198.51.100.2","flags":[],"uid":0,"cache":[]}]';
    const runner = scripted({ 'ip -j route get 198.51.100.2 mark 0 uid 1337': ok(json) });
    expect(await routeGet(runner, '198.51.100.2', 0, 1337)).toMatchObject({ dev: 'lo', local: true, src: { text: '198.51.100.2/32' } });
  });
});

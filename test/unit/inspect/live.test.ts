import { describe, expect, it } from 'vitest';
import { readSetMembers, routeGet } from '../../../src/inspect/live.js';
import { ok, scripted } from '../../helpers/scripted-runner.js';

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

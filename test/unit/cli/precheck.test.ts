import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { expectConfigError } from '../../helpers/errors.js';

/** The precheck command line, in process (its runner refuses every command: nothing reaches the machine). */
describe('meshcap precheck command line', () => {
  it('exits 5 naming the namespace when --netns does not exist, and runs nothing', async () => {
    const res = await runCli(['precheck', '--netns', '/run/netns/meshcap-no-such-namespace']);
    expect(res).toMatchObject({ code: 5, stdout: '', commands: [] });
    expect(res.stderr).toBe('meshcap: network namespace /run/netns/meshcap-no-such-namespace does not exist (--netns)\n');
  });

  it.each([
    [['precheck', '--port', '80,http'], '--port', '80,http'],
    [['precheck', '--netns', 'relative/path'], '--netns', 'relative/path'],
    [['precheck', '--fail-on', 'never'], '--fail-on', 'never'],
    [['precheck', '--proxy-gid', '-1'], '--proxy-gid', '-1'],
    [['precheck', 'extra'], 'command line', 'extra'],
  ])('refuses %j with exit 2 naming the flag', async (argv, field, value) => {
    const res = await runCli(argv);
    expectConfigError(res, field, value);
    expect(res.commands).toEqual([]);
  });

  it('exits 4 with a hint when no iptables backend can be read', async () => {
    const res = await runCli(['precheck', '--netns', '/proc/self/ns/net']);
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(/^meshcap: iptables-save \(legacy and nft\) and nft list ruleset failed .*hint: install iptables and nftables/);
    expect(res.commands).toContain('iptables-legacy-save');
  });
});

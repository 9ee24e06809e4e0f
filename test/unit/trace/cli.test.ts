import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { entryCommand } from '../../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../../helpers/plan.js';

const dir = mkdtempSync(join(tmpdir(), 'meshcap-trace-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dumpFile = join(dir, 'istio-init.save');

async function istioInitDump(): Promise<string> {
  const dry = await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'on']);
  writeFileSync(dumpFile, dry.stdout);
  return dry.stdout;
}

describe('meshcap trace input', () => {
  it.each([
    [['trace', '--rules', '/dev/null', '--dport', '80'], '--dst'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1'], '--dport'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1/32', '--dport', '80'], '--dst'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '0'], '--dport'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '80', '--src', '2001:db8::1'], '--src'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '80', '--direction', 'sideways'], '--direction'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '80', '--mark', '0x1ffffffff'], '--mark'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '80', '--uid', '-1'], '--uid'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '80', '--out-iface', 'a b'], '--out-iface'],
    [['trace', '--rules', '/dev/null', '--netns', '/run/netns/x', '--dst', '203.0.113.1', '--dport', '80'], '--rules'],
    [['trace', '--rules', '/nonexistent/dump', '--dst', '203.0.113.1', '--dport', '80'], '--rules'],
    [['trace', '--rules', '/dev/null', '--dst', '203.0.113.1', '--dport', '80'], '--rules'],
  ])('exits 2 on %j with one line naming %s', async (argv, flag) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`invalid ${flag}`);
    expect(r.commands).toEqual([]);
  });

  it('exits 5 when the namespace does not exist', async () => {
    const r = await runCli(['trace', '--netns', '/run/netns/meshcap-trace-gone', '--dst', '203.0.113.1', '--dport', '80']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('/run/netns/meshcap-trace-gone');
  });

  it('names a dump line it cannot read', async () => {
    writeFileSync(join(dir, 'bad.save'), '*nat\n:OUTPUT ACCEPT [0:0]\nthis is not a rule\nCOMMIT\n');
    const r = await runCli(['trace', '--rules', join(dir, 'bad.save'), '--dst', '203.0.113.1', '--dport', '80']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('line 3');
  });
});

describe('meshcap trace over a dump', () => {
  it('prints each rule that decided with its purpose, then the verdict in words', async () => {
    await istioInitDump();
    const r = await runCli(['trace', '--rules', dumpFile, '--dst', '2001:db8:2::10', '--dport', '443', '--uid', '1337']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('nat ISTIO_OUTPUT  -A ISTIO_OUTPUT -m owner --uid-owner 1337 -j RETURN   [skip-proxy-owner]');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('verdict: passes uncaptured: uid 1337 is the proxy');
  });

  it('prints exactly the JSON object the docs describe', async () => {
    await istioInitDump();
    const r = await runCli(['trace', '--rules', dumpFile, '--dst', '198.51.100.2', '--dport', '8080', '--direction', 'inbound', '--json']);
    expect(JSON.parse(r.stdout)).toEqual({
      verdict: 'redirect',
      port: 15006,
      family: 'ipv4',
      path: [
        { table: 'nat', chain: 'PREROUTING', rule: '-A PREROUTING -p tcp -j ISTIO_INBOUND' },
        { table: 'nat', chain: 'ISTIO_INBOUND', rule: '-A ISTIO_INBOUND -p tcp -j ISTIO_IN_REDIRECT' },
        { table: 'nat', chain: 'ISTIO_IN_REDIRECT', rule: '-A ISTIO_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006' },
      ],
    });
  });

  it('reads the dump from stdin with --rules - (the built entry point)', async () => {
    const text = await istioInitDump();
    const { file, args } = entryCommand();
    const r = await execa(file, [...args, 'trace', '--rules', '-', '--dst', '203.0.113.10', '--dport', '80', '--uid', '1000', '--json'], { input: text, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ verdict: 'redirect', port: 15001, family: 'ipv4' });
  });
});

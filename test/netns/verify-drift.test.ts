import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { meshcapIn, saveOf } from '../helpers/meshcap.js';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { FOREIGN_V4, FOREIGN_V6 } from '../fixtures/foreign-rules.js';

requireRoot();

/**
 * `--verify` against real namespaces: apply, break one thing with the real tools, verify. Each case checks
 * the exit code, the difference named, and that verify left the namespace byte for byte as it found it.
 */
const SIDECAR = [...ISTIO_INIT_ARGS, '--ipv6', 'on'];
const TPROXY = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '-d', '15021', '--ipv6', 'on'];
const AMBIENT = ['ambient', '--inbound', 'redirect', '--ipv6', 'on'];
const bin = (family: 'ipv4' | 'ipv6', backend: string, tool = '') => `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-${backend}${tool}`;

/** Everything verify could change: both families' rules, ip rules, the routing tables, addresses, ipsets. */
async function fingerprint(ns: Netns, backend: 'nft' | 'legacy'): Promise<string> {
  const parts = [await saveOf(ns, 'ipv4', backend), await saveOf(ns, 'ipv6', backend)];
  for (const args of [['-4', 'rule'], ['-6', 'rule'], ['-4', 'route', 'show', 'table', 'all'], ['-6', 'route', 'show', 'table', 'all'], ['address']]) {
    parts.push((await ns.run('ip', args)).stdout);
  }
  parts.push((await ns.run('ipset', ['list'])).stdout);
  return parts.join('\n---\n');
}

for (const backend of ['nft', 'legacy'] as const) {
  describe(`--verify (${backend})`, () => {
    let ns: Netns | undefined;
    const apply = async (args: readonly string[]) => {
      const r = await meshcapIn(ns as Netns, [...args, '--force-iptables-binary', backend]);
      expect(r.exitCode, r.stderr).toBe(0);
    };
    const verify = async (args: readonly string[], extra: readonly string[] = []) => {
      const before = await fingerprint(ns as Netns, backend);
      const r = await meshcapIn(ns as Netns, [...args, '--verify', ...extra]);
      expect(await fingerprint(ns as Netns, backend)).toBe(before);
      return r;
    };
    const ipt = (family: 'ipv4' | 'ipv6', args: readonly string[]) => (ns as Netns).run(bin(family, backend), args);

    beforeEach(async () => {
      ns = await createNetns('mcverify');
      await ns.run('ip', ['link', 'set', 'lo', 'up']);
    });
    afterEach(async () => {
      await deleteNetns(ns);
    });

    it('exits 0 and prints nothing when the namespace holds exactly the config, foreign rules elsewhere ignored', async () => {
      await ns!.run(bin('ipv4', backend, '-restore'), ['--noflush'], { input: FOREIGN_V4 });
      await ns!.run(bin('ipv6', backend, '-restore'), ['--noflush'], { input: FOREIGN_V6 });
      await apply(SIDECAR);
      const r = await verify(SIDECAR);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(JSON.parse((await verify(SIDECAR, ['--json'])).stdout)).toEqual({ equal: true, missing: [], unexpected: [] });
    });

    it('names a deleted rule of our chain as missing and exits 1', async () => {
      await apply(SIDECAR);
      await ipt('ipv4', ['-t', 'nat', '-D', 'ISTIO_OUTPUT', '-d', '127.0.0.1/32', '-j', 'RETURN']);
      const r = await verify(SIDECAR);
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('missing: -A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN (nat, ipv4)');
    });

    it('names an extra rule in our chain as unexpected', async () => {
      await apply(SIDECAR);
      await ipt('ipv6', ['-t', 'nat', '-I', 'ISTIO_OUTPUT', '2', '-d', '2001:db8:9::/48', '-j', 'RETURN']);
      const r = await verify(SIDECAR, ['--json']);
      expect(r.exitCode).toBe(1);
      expect(JSON.parse(r.stdout)).toEqual({ equal: false, missing: [], unexpected: ['-A ISTIO_OUTPUT -d 2001:db8:9::/48 -j RETURN (nat, ipv6)'] });
    });

    it('names the removed jump from OUTPUT', async () => {
      await apply(SIDECAR);
      await ipt('ipv4', ['-t', 'nat', '-D', 'OUTPUT', '-j', 'ISTIO_OUTPUT']);
      const r = await verify(SIDECAR);
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('missing: -A OUTPUT -j ISTIO_OUTPUT (nat, ipv4)');
    });

    it('names a deleted local route and a deleted ip rule of TPROXY', async () => {
      await apply(TPROXY);
      await ns!.run('ip', ['-6', 'route', 'del', 'local', '::/0', 'dev', 'lo', 'table', '133']);
      await ns!.run('ip', ['-4', 'rule', 'del', 'fwmark', '0x539', 'lookup', '133']);
      const r = await verify(TPROXY);
      expect(r.exitCode).toBe(1);
      expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(['missing ip rule: fwmark 0x539 lookup 133 (ipv4)', 'missing route: local ::/0 dev lo table 133']);
    });

    it('lists what another config has that this one does not want, both ways', async () => {
      await apply(SIDECAR);
      const r = await verify(TPROXY, ['--json']);
      expect(r.exitCode).toBe(1);
      const d = JSON.parse(r.stdout) as { equal: boolean; missing: string[]; unexpected: string[] };
      expect(d.equal).toBe(false);
      expect(d.missing).toContain('-A ISTIO_TPROXY ! -d 127.0.0.1/32 -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff (mangle, ipv4)');
      expect(d.missing).toContain('route: local 0.0.0.0/0 dev lo table 133');
      expect(d.unexpected).toContain('-A PREROUTING -p tcp -j ISTIO_INBOUND (nat, ipv4)');
    });

    it('in an empty namespace reports every rule, chain and route missing and nothing unexpected', async () => {
      const r = await verify(TPROXY, ['--json']);
      expect(r.exitCode).toBe(1);
      const d = JSON.parse(r.stdout) as { missing: string[]; unexpected: string[] };
      expect(d.unexpected).toEqual([]);
      expect(d.missing).toContain('-N ISTIO_OUTPUT (nat, ipv6)');
      expect(d.missing).toContain('-A OUTPUT -j ISTIO_OUTPUT (nat, ipv4)');
      expect(d.missing).toContain('route: local ::/0 dev lo table 133');
    });

    it('verifies ambient in the pod and ambient-host in the node namespace', async () => {
      await apply(AMBIENT);
      expect((await verify(AMBIENT)).exitCode).toBe(0);
      await ipt('ipv4', ['-t', 'mangle', '-D', 'OUTPUT', '-j', 'ISTIO_OUTPUT']);
      const r = await verify(AMBIENT);
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('missing: -A OUTPUT -j ISTIO_OUTPUT (mangle, ipv4)');
      const host = ['ambient-host', '--ipv6', 'on'];
      await apply(host);
      expect((await verify(host)).exitCode).toBe(0);
    });
  });
}

describe('--verify input errors', () => {
  it('exits 5 naming a namespace that does not exist, and 2 with --dry-run', async () => {
    const gone = { name: 'none', path: '/run/netns/meshcap-verify-gone' } as Netns;
    const r = await meshcapIn(gone, [...SIDECAR, '--verify']);
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain('/run/netns/meshcap-verify-gone');
    const n = await meshcapIn(gone, [...SIDECAR, '--verify', '-n']);
    expect(n.exitCode).toBe(2);
    expect(n.stderr).toContain('--verify');
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { meshcapIn, saveOf } from '../helpers/meshcap.js';
import { createNetns, deleteNetns, requireRoot, splitDryRunFamilies, type Netns } from '../helpers/netns.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { FOREIGN_V4, FOREIGN_V6 } from '../fixtures/foreign-rules.js';

requireRoot();

type Backend = 'nft' | 'legacy';
const FAMILIES = ['ipv4', 'ipv6'] as const;
const restoreBin = (f: 'ipv4' | 'ipv6', b: Backend) => `${f === 'ipv4' ? 'iptables' : 'ip6tables'}-${b}-restore`;

/** Config A: istio-init with an excluded interface (rules in builtin chains that jump nowhere). */
const A = [...ISTIO_INIT_ARGS, '-c', 'eth2', '--ipv6', 'on'];
/** Config B: TPROXY, a CIDR list, kube-virt inserts, another excluded interface: other tables, routes. */
const B = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '-d', '15021', '-i', '203.0.113.0/24', '-k', 'eth3', '-c', 'eth4', '--ipv6', 'on'];

async function ourLines(args: readonly string[]): Promise<Set<string>> {
  const dry = await runCli(['-n', ...args]);
  const { ipv4, ipv6 } = splitDryRunFamilies(dry.stdout);
  return new Set(`${ipv4}\n${ipv6}`.split('\n').filter((l) => l.startsWith('-A ')));
}

/** The save output without any line of ours (ISTIO_* chains, our rules in builtin chains). */
function foreignView(save: string, ours: ReadonlySet<string>): string {
  return save
    .split('\n')
    .filter((l) => !l.includes('ISTIO_') && !ours.has(l))
    .join('\n');
}

async function snapshot(ns: Netns, b: Backend): Promise<Record<'ipv4' | 'ipv6', string>> {
  return { ipv4: await saveOf(ns, 'ipv4', b), ipv6: await saveOf(ns, 'ipv6', b) };
}

async function ipRules(ns: Netns): Promise<string> {
  const v4 = await ns.run('ip', ['-4', 'rule', 'show']);
  const v6 = await ns.run('ip', ['-6', 'rule', 'show']);
  return `${v4.stdout}\n${v6.stdout}`;
}

for (const backend of ['nft', 'legacy'] as const) {
  describe(`apply, re-apply, reconcile and cleanup (${backend})`, () => {
    let ns: Netns | undefined;
    let other: Netns | undefined;
    const run = (args: readonly string[], target = ns) => meshcapIn(target as Netns, [...args, '--force-iptables-binary', backend]);
    const preload = async (target: Netns) => {
      await target.run('ip', ['link', 'set', 'lo', 'up']);
      await target.run(restoreBin('ipv4', backend), ['--noflush'], { input: FOREIGN_V4 });
      await target.run(restoreBin('ipv6', backend), ['--noflush'], { input: FOREIGN_V6 });
      await target.run('ip', ['rule', 'add', 'fwmark', '0x99', 'lookup', '99', 'priority', '100']);
    };

    beforeEach(async () => {
      ns = await createNetns('mclife');
      await preload(ns);
    });
    afterEach(async () => {
      await deleteNetns(ns);
      await deleteNetns(other);
      other = undefined;
    });

    it('applies, and applying the same config again changes nothing and exits 0', async () => {
      const first = await run(A);
      expect(first.exitCode).toBe(0);
      const after = await snapshot(ns!, backend);
      const again = await run(A);
      expect(again.exitCode).toBe(0);
      expect(again.stderr).toContain('"action":"unchanged"');
      expect(await snapshot(ns!, backend)).toEqual(after);
      expect(after.ipv4).toContain('-A OUTPUT -j ISTIO_OUTPUT');
      expect(after.ipv6).toContain('-A ISTIO_OUTPUT -s ::6/128 -o lo -j RETURN');
    });

    it('keeps every foreign rule byte-identical through apply, reconcile and cleanup', async () => {
      const ours = new Set([...(await ourLines(A)), ...(await ourLines(B))]);
      const before = await snapshot(ns!, backend);
      const rulesBefore = await ipRules(ns!);
      for (const step of [A, [...B, '--reconcile'], [...B, '--cleanup-only']]) {
        const r = await run(step);
        expect(r.exitCode).toBe(0);
        const now = await snapshot(ns!, backend);
        for (const f of FAMILIES) expect(foreignView(now[f], ours)).toBe(foreignView(before[f], ours));
      }
      const final = await snapshot(ns!, backend);
      for (const f of FAMILIES) {
        expect(final[f]).not.toContain('ISTIO_');
        expect(final[f]).toBe(before[f]);
      }
      expect(await ipRules(ns!)).toBe(rulesBefore);
    });

    it('refuses a different config without --reconcile, naming what differs, and changes nothing', async () => {
      expect((await run(A)).exitCode).toBe(0);
      const applied = await snapshot(ns!, backend);
      const r = await run(B);
      expect(r.exitCode).toBe(5);
      expect(r.stderr).toContain('--reconcile');
      expect(r.stderr).toMatch(/ISTIO_(INBOUND|OUTPUT|TPROXY|DIVERT)/);
      expect(await snapshot(ns!, backend)).toEqual(applied);
    });

    it('with --reconcile ends exactly where a fresh apply of the new config would', async () => {
      expect((await run(A)).exitCode).toBe(0);
      const r = await run([...B, '--reconcile']);
      expect(r.exitCode).toBe(0);
      expect(r.stderr).toContain('"action":"reconciled"');
      other = await createNetns('mcfresh');
      await preload(other);
      expect((await run(B, other)).exitCode).toBe(0);
      expect(await snapshot(ns!, backend)).toEqual(await snapshot(other, backend));
      expect(await ipRules(ns!)).toBe(await ipRules(other));
    });

    it('installs policy routing and ::6 without duplicates, and cleanup removes exactly them', async () => {
      expect((await run(B)).exitCode).toBe(0);
      expect((await run(B)).exitCode).toBe(0);
      const rules = await ipRules(ns!);
      expect(rules.match(/fwmark 0x539 lookup 133/g)).toHaveLength(2);
      expect((await ns!.run('ip', ['-6', 'route', 'show', 'table', '133'])).stdout).toContain('local default dev lo');
      expect((await ns!.run('ip', ['-6', 'addr', 'show', 'dev', 'lo'])).stdout).toContain('::6/128');
      const clean = await run([...B, '--cleanup-only']);
      expect(clean.exitCode).toBe(0);
      const after = await ipRules(ns!);
      expect(after).not.toContain('lookup 133');
      expect(after).toContain('fwmark 0x99 lookup 99');
      expect((await ns!.run('ip', ['-6', 'addr', 'show', 'dev', 'lo'])).stdout).not.toContain('::6/128');
      expect((await ns!.run('ip', ['route', 'show', 'table', '133'])).stdout).toBe('');
    });

    it('cleans up a namespace that holds none of our rules, twice, with exit 0', async () => {
      const before = await snapshot(ns!, backend);
      for (let i = 0; i < 2; i++) {
        const r = await run([...A, '--cleanup-only']);
        expect(r.exitCode).toBe(0);
      }
      expect(await snapshot(ns!, backend)).toEqual(before);
    });

    it('cleanup removes only what its own config creates', async () => {
      expect((await run(A)).exitCode).toBe(0);
      const r = await run([...A, '-c', 'eth2,eth7', '--cleanup-only']);
      expect(r.exitCode).toBe(0);
      const now = await snapshot(ns!, backend);
      expect(now.ipv4).not.toContain('ISTIO_');
      expect(now.ipv4).toContain('-A PREROUTING -i eth9 -j RETURN');
    });
  });
}

describe('environment errors', () => {
  it('exits 5 when --netns does not exist', async () => {
    const r = await meshcapIn({ path: '/run/netns/meshcap-no-such-ns' } as Netns, [...ISTIO_INIT_ARGS]);
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain('/run/netns/meshcap-no-such-ns');
  });

  it('exits 5 when --netns is not a network namespace', async () => {
    const r = await meshcapIn({ path: '/etc/hostname' } as Netns, [...ISTIO_INIT_ARGS]);
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain('not a network namespace');
  });
});

describe('the init-container case and --ipv6 auto', () => {
  it('applies in the current namespace when --netns is not given, detecting IPv6 there', async () => {
    const { execa } = await import('execa');
    const { entryCommand } = await import('../helpers/paths.js');
    const { file, args } = entryCommand();
    const ns = await createNetns('mcinit');
    try {
      await ns.run('ip', ['link', 'set', 'lo', 'up']);
      await ns.run('ip', ['link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth1']);
      await ns.run('ip', ['address', 'add', '2001:db8:5::2/64', 'dev', 'eth0', 'nodad']);
      await ns.run('ip', ['link', 'set', 'eth1', 'up']);
      await ns.run('ip', ['link', 'set', 'eth0', 'up']);
      const r = await execa('ip', ['netns', 'exec', ns.name, file, ...args, ...ISTIO_INIT_ARGS], { reject: false });
      expect(r.exitCode).toBe(0);
      expect(await saveOf(ns, 'ipv6', 'nft')).toContain('-A ISTIO_OUTPUT -j ISTIO_REDIRECT');
      // The same detection through --netns reads the target's addresses, not the caller's.
      const again = await meshcapIn(ns, [...ISTIO_INIT_ARGS]);
      expect(again.exitCode).toBe(0);
      expect(again.stderr).toContain('"action":"unchanged"');
      expect(again.stderr).toContain('2001:db8:5::2 is IPv6');
    } finally {
      await deleteNetns(ns);
    }
  });
});

describe('ambient: reconcile between layouts, and the node side', () => {
  let ns: Netns | undefined;
  let fresh: Netns | undefined;
  afterEach(async () => {
    await deleteNetns(ns);
    await deleteNetns(fresh);
    fresh = undefined;
  });
  const preloaded = async (name: string) => {
    const n = await createNetns(name);
    await n.run('ip', ['link', 'set', 'lo', 'up']);
    await n.run('iptables-nft-restore', ['--noflush'], { input: FOREIGN_V4 });
    await n.run('ip6tables-nft-restore', ['--noflush'], { input: FOREIGN_V6 });
    return n;
  };

  it('moves a pod from the tproxy to the redirect layout with --reconcile, ending where a fresh apply would', async () => {
    ns = await preloaded('mcamb');
    const tproxy = ['ambient', '--inbound', 'tproxy', '--redirect-dns', '--ipv6', 'on'];
    const redirect = ['ambient', '--inbound', 'redirect', '--redirect-dns', '--ipv6', 'on'];
    expect((await meshcapIn(ns, tproxy)).exitCode).toBe(0);
    const refused = await meshcapIn(ns, redirect);
    expect(refused.exitCode).toBe(5);
    expect((await meshcapIn(ns, [...redirect, '--reconcile'])).exitCode).toBe(0);
    fresh = await preloaded('mcambf');
    expect((await meshcapIn(fresh, redirect)).exitCode).toBe(0);
    expect(await snapshot(ns, 'nft')).toEqual(await snapshot(fresh, 'nft'));
    expect(await ipRules(ns)).toBe(await ipRules(fresh));
  });

  it('ambient-host is idempotent and touches only its own chain and sets in the node namespace', async () => {
    ns = await preloaded('mcnode');
    // Another tool's chain that merely starts with ISTIO_ is not ours on the node.
    await ns.run('iptables-nft-restore', ['--noflush'], { input: '*nat\n:ISTIO_OTHER - [0:0]\n-A POSTROUTING -j ISTIO_OTHER\n-A ISTIO_OTHER -j RETURN\nCOMMIT\n' });
    const before = await snapshot(ns, 'nft');
    const host = ['ambient-host', '--ipv6', 'on', '--add-pod-ip', '198.51.100.7,2001:db8:1::7'];
    expect((await meshcapIn(ns, host)).exitCode).toBe(0);
    const applied = await snapshot(ns, 'nft');
    // Inserted first, ahead of the masquerade.
    expect(applied.ipv4).toContain('-A POSTROUTING -j ISTIO_POSTRT\n-A POSTROUTING -s 198.51.100.0/24 -j MASQUERADE');
    expect(applied.ipv4).toContain('-A ISTIO_OTHER -j RETURN');
    expect((await meshcapIn(ns, host)).exitCode).toBe(0);
    expect(await snapshot(ns, 'nft')).toEqual(applied);
    const sets = (await ns.run('ipset', ['save'])).stdout;
    expect(sets).toContain('add istio-inpod-probes-v4 198.51.100.7');
    expect(sets).toContain('add istio-inpod-probes-v6 2001:db8:1::7');
    expect((await meshcapIn(ns, ['ambient-host', '--ipv6', 'on', '--cleanup-only'])).exitCode).toBe(0);
    expect(await snapshot(ns, 'nft')).toEqual(before);
    expect((await ns.run('ipset', ['list', '-n'])).stdout.trim()).toBe('');
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { exchangeRoute } from '../../src/exec/native.js';
import { encodeGetLink, parseLinkIndex } from '../../src/exec/rtnetlink.js';
import { readReply } from '../../src/inspect/netlink.js';
import { runCni } from '../helpers/cni.js';
import { meshcapIn, saveOf } from '../helpers/meshcap.js';
import { FOREIGN_V4, FOREIGN_V6 } from '../fixtures/foreign-rules.js';
import { createNetns, deleteNetns, netnsPool, requireRoot, type Netns } from '../helpers/netns.js';
import { entryCommand, REPO_ROOT } from '../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';

requireRoot();

/**
 * Routing (ip rules, local routes, ::6 on lo) made in-process by rtnetlink and through `ip -batch`
 * (MESHCAP_NATIVE=spawn, the fallback) must leave a namespace in the same state, byte for byte as `ip`
 * shows it: every config that routes is applied both ways into two fresh namespaces and compared, then
 * re-applied, verified and cleaned up with the paths mixed.
 */
const SPAWN = { MESHCAP_NATIVE: 'spawn' };
const USERNS_HELPER = join(REPO_ROOT, 'test', 'fixtures', 'in_userns.py');
const CONFIGS = {
  'TPROXY sidecar, IPv4 + IPv6': ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '-i', '*', '--ipv6', 'on'],
  'ambient in the pod, IPv4 + IPv6': ['ambient', '--inbound', 'redirect', '--ipv6', 'on'],
  'ambient in the pod, native nftables': ['ambient', '--native-nftables', '--inbound', 'redirect', '--ipv6', 'on'],
  "istio-init with IPv6 (its ::6 on lo)": [...ISTIO_INIT_ARGS, '--ipv6', 'on'],
} as const;
/** What each config routes, as `ip` shows it (so a comparison of two empty states cannot pass). */
const MARKERS: Record<keyof typeof CONFIGS, RegExp[]> = {
  'TPROXY sidecar, IPv4 + IPv6': [/fwmark 0x539 lookup 133\n[^]*fwmark 0x539 lookup 133/, /local default dev lo table 133 scope host/, /local default dev lo table 133 metric 1024/, /"local":"::6","prefixlen":128/],
  'ambient in the pod, IPv4 + IPv6': [/32764:\tfrom all fwmark 0x111\/0xfff lookup 100\n[^]*32764:\tfrom all fwmark 0x111\/0xfff lookup 100/, /local default dev lo table 100 scope host/, /local default dev lo table 100 metric 1024/],
  'ambient in the pod, native nftables': [/fwmark 0x111\/0xfff lookup 100/, /local default dev lo table 100 scope host/],
  "istio-init with IPv6 (its ::6 on lo)": [/"local":"::6","prefixlen":128,"scope":"global"/],
};

/** The namespace's routing as `ip` prints it: rules and every table of both families, and lo's addresses. */
async function routing(ns: Netns): Promise<string> {
  const parts = await Promise.all([['-4', 'rule', 'show'], ['-6', 'rule', 'show'], ['-4', 'route', 'show', 'table', 'all'], ['-6', 'route', 'show', 'table', 'all'], ['-j', 'address', 'show', 'dev', 'lo']].map((a) => ns.run('ip', a)));
  return parts.map((p) => p.stdout).join('\n---\n');
}

/** Someone else's routing, there before meshcap: a rule and a local route per family, and an address on lo. */
async function addForeign(ns: Netns): Promise<void> {
  for (const [f, all] of [['-4', '0.0.0.0/0'], ['-6', '::/0']] as const) {
    await ns.run('ip', [f, 'rule', 'add', 'fwmark', '0x99', 'lookup', '99', 'priority', '100']);
    await ns.run('ip', [f, 'route', 'add', 'local', all, 'dev', 'lo', 'table', '99']);
  }
  await ns.run('ip', ['-6', 'address', 'add', '2001:db8::99/128', 'dev', 'lo']);
}

const applied = async (ns: Netns, args: readonly string[], env: Record<string, string> = {}) => {
  const r = await meshcapIn(ns, args, env);
  expect(r.exitCode, r.stderr).toBe(0);
  return r;
};

describe.each(Object.entries(CONFIGS) as [keyof typeof CONFIGS, readonly string[]][])('routing of %s, by rtnetlink and by ip', (name, args) => {
  const pool = netnsPool();
  afterEach(pool.removeAll);

  it('leaves two fresh namespaces in the same state, and a re-apply either way adds no duplicate', async () => {
    const native = await pool.make('mcrtn');
    const spawned = await pool.make('mcrts');
    await applied(native, args);
    await applied(spawned, args, SPAWN);
    const want = await routing(spawned);
    for (const m of MARKERS[name]) expect(want).toMatch(m);
    expect(await routing(native)).toBe(want);
    await applied(native, args);
    await applied(native, args, SPAWN);
    await applied(spawned, args);
    expect(await routing(native)).toBe(want);
    expect(await routing(spawned)).toBe(want);
  });

  it('cleans up exactly its own routing — every duplicate, foreign rules, routes and addresses kept — whichever path applied it', async () => {
    for (const [applyEnv, cleanEnv] of [[{}, {}], [{}, SPAWN], [SPAWN, {}]] as const) {
      const ns = await pool.make('mcrtc');
      await addForeign(ns);
      const before = await routing(ns);
      await applied(ns, args, applyEnv);
      // Istio's re-runs leave duplicates of its rules (those without a priority: the kernel numbers them); cleanup removes every one.
      if (/fwmark 0x539 lookup 133/.test(await routing(ns))) await ns.run('ip', ['-4', 'rule', 'add', 'fwmark', '0x539', 'lookup', '133']);
      expect(await routing(ns)).not.toBe(before);
      await applied(ns, [...args, '--cleanup-only'], cleanEnv);
      expect(await routing(ns)).toBe(before);
    }
  });

  it('applies the same routing from inside the namespace (istio-init: no --netns, no setns)', async () => {
    const inside = await pool.make('mcrti');
    const spawned = await pool.make('mcrtis');
    const { file, args: pre } = entryCommand();
    const r = await execa('ip', ['netns', 'exec', inside.name, file, ...pre, ...args], { reject: false, env: {} });
    expect(r.exitCode, r.stderr).toBe(0);
    await applied(spawned, args, SPAWN);
    expect(await routing(inside)).toBe(await routing(spawned));
  });
});

describe('verify and CHECK read routing by rtnetlink as ip does', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);
  const TPROXY = CONFIGS['TPROXY sidecar, IPv4 + IPv6'];

  it('--verify names a deleted ip rule, local route and ::6, the same on both paths', async () => {
    const ns = await pool.make('mcrtv');
    await applied(ns, TPROXY);
    expect((await meshcapIn(ns, [...TPROXY, '--verify'])).exitCode).toBe(0);
    await ns.run('ip', ['-4', 'rule', 'del', 'fwmark', '0x539', 'lookup', '133']);
    await ns.run('ip', ['-6', 'route', 'del', 'local', '::/0', 'dev', 'lo', 'table', '133']);
    await ns.run('ip', ['-6', 'address', 'del', '::6/128', 'dev', 'lo']);
    const native = await meshcapIn(ns, [...TPROXY, '--verify']);
    expect(native.exitCode).toBe(1);
    expect(native.stdout.split('\n').filter(Boolean).sort()).toEqual(['missing address: ::6/128 dev lo', 'missing ip rule: fwmark 0x539 lookup 133 (ipv4)', 'missing route: local ::/0 dev lo table 133']);
    const spawned = await meshcapIn(ns, [...TPROXY, '--verify'], SPAWN);
    expect(spawned.exitCode).toBe(1);
    expect(spawned.stdout).toBe(native.stdout);
  });

  it('CNI CHECK of an ambient pod fails once its ip rule or route is gone, and ADD puts them back', async () => {
    const pod = await pool.make('mcrtk');
    const conf = { mode: 'ambient', inbound: 'redirect' };
    const cni = (command: string) => runCni(command, pod, conf, { id: 'rtk' });
    expect((await cni('ADD')).exitCode).toBe(0);
    const full = await routing(pod);
    expect((await cni('CHECK')).exitCode).toBe(0);
    await pod.run('ip', ['-4', 'rule', 'del', 'fwmark', '0x111/0xfff', 'priority', '32764', 'lookup', '100']);
    const noRule = await cni('CHECK');
    expect(noRule.exitCode).not.toBe(0);
    expect(noRule.stdout).toContain('missing ip rule: fwmark 0x111/0xfff priority 32764 lookup 100 (ipv4)');
    expect((await cni('ADD')).exitCode).toBe(0);
    expect(await routing(pod)).toBe(full);
    await pod.run('ip', ['-4', 'route', 'del', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '100']);
    const noRoute = await cni('CHECK');
    expect(noRoute.exitCode).not.toBe(0);
    expect(noRoute.stdout).toContain('missing route: local 0.0.0.0/0 dev lo table 100');
    expect((await cni('DEL')).exitCode).toBe(0);
    expect(await routing(pod)).not.toMatch(/lookup 100|table 100/);
  });
});

describe('the in-process exchange (src/exec/native.ts)', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);

  it('talks to the namespace it was given, and sends nothing where it cannot enter one', async () => {
    const ns = await pool.make('mcrtx');
    // A link only that namespace has (read-only requests here: nothing this test sends could change a namespace).
    await ns.run('ip', ['link', 'add', 'mcq0', 'type', 'veth', 'peer', 'name', 'mcq1']);
    const inside = await exchangeRoute(ns.path, [encodeGetLink('mcq0')]);
    expect(inside).toBeDefined();
    expect(readReply(inside?.[0] ?? []).errno).toBe(0);
    expect(parseLinkIndex(readReply(inside?.[0] ?? []).data[0] ?? Buffer.alloc(24))).toBe(Number((await ns.run('cat', ['/sys/class/net/mcq0/ifindex'])).stdout));
    const file = join(mkdtempSync(join(tmpdir(), 'mcrtx-')), 'not-a-netns');
    writeFileSync(file, '');
    try {
      expect(await exchangeRoute(file, [encodeGetLink('lo')])).toBeUndefined();
      expect(await exchangeRoute('/run/netns/mcrtx-gone', [encodeGetLink('lo')])).toBeUndefined();
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
    }
  });
});

describe('rtnetlink failures', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);

  it('fail as the ip command did (exit 4, the request and the kernel reason named) and put the rules back', async () => {
    const ns = await pool.make('mcrtf');
    await ns.run('iptables-nft-restore', ['--noflush'], { input: FOREIGN_V4 });
    await ns.run('ip6tables-nft-restore', ['--noflush'], { input: FOREIGN_V6 });
    await ns.run('ip', ['link', 'set', 'lo', 'down']);
    const states = async () => [await saveOf(ns, 'ipv4', 'nft'), await saveOf(ns, 'ipv6', 'nft')];
    const before = await states();
    const args = CONFIGS['TPROXY sidecar, IPv4 + IPv6'];
    const r = await meshcapIn(ns, args);
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('rtnetlink RTM_NEWROUTE local ::/0 dev lo table 133 (ipv6) failed: Network is down (Nexthop device is not up) (hint: bring lo up in the namespace)');
    expect(await states()).toEqual(before);
    const spawned = await meshcapIn(ns, args, SPAWN);
    expect(spawned.exitCode).toBe(4);
    expect(spawned.stderr).toContain('Nexthop device is not up. (hint: bring lo up in the namespace)');
    expect(await states()).toEqual(before);
  });
});

describe('a pod whose namespace belongs to its own user namespace (hostUsers: false)', () => {
  it('gets its routing by rtnetlink from the node (root has CAP_NET_ADMIN over it), as ip run in its user namespace makes it', async () => {
    const made: Netns[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'mcrtu-'));
    try {
      for (let i = 0; i < 2; i++) {
        made.push(await createNetns('mcrtu', { userns: true }));
        await made[i]?.run('ip', ['link', 'set', 'lo', 'up']);
      }
      const [native, byIp] = made as [Netns, Netns];
      const args = CONFIGS['TPROXY sidecar, IPv4 + IPv6'];
      const { file, args: pre } = entryCommand();
      const log = join(dir, 'log');
      const r = await execa('strace', ['-f', '-qq', '-e', 'trace=execve', '-o', log, file, ...pre, ...args, '--netns', native.path], { reject: false, env: {} });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(readFileSync(log, 'utf8')).not.toMatch(/execve\("[^"]*\/ip"/);
      // The fallback's own lines (test/unit/exec/rtnetlink.test.ts), run by ip as the pod's root in its user namespace.
      const inPod = (family: string, input: string) => execa('python3', [USERNS_HELPER, byIp.path, 'ip', family, '-batch', '-'], { input });
      await inPod('-4', 'rule add fwmark 0x539 lookup 133\nroute replace local 0.0.0.0/0 dev lo table 133\n');
      await inPod('-6', 'rule add fwmark 0x539 lookup 133\nroute replace local ::/0 dev lo table 133\naddress replace ::6/128 dev lo\n');
      const want = await routing(byIp);
      expect(want).toMatch(/fwmark 0x539 lookup 133/);
      expect(await routing(native)).toBe(want);
      await applied(native, [...args, '--cleanup-only']);
      expect(await routing(native)).not.toMatch(/lookup 133|table 133|"::6"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await Promise.all(made.map((n) => deleteNetns(n)));
    }
  });
});

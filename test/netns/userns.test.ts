import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { meshcapIn, saveOf } from '../helpers/meshcap.js';
import { requireRoot, splitDryRunFamilies, withNetns, type Netns } from '../helpers/netns.js';
import { INJECTED_POD, ISTIO_CNI_FLAGS, runCni } from '../helpers/cni.js';
import { nftListing } from '../helpers/nft.js';
import { entryCommand } from '../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { FOREIGN_V4, FOREIGN_V6 } from '../fixtures/foreign-rules.js';
import { ADDR, PROXY, ROOT, PodTopology, type Identity } from '../helpers/topology.js';

requireRoot();

/**
 * Pods with their own user namespace (Kubernetes `hostUsers: false`): the pod's network namespace is owned
 * by a child user namespace (pod uids 0..65535 = host 200000..), pinned by a bind mount, with no process
 * left in it — as containerd makes it — and meshcap writes from the node with `--netns`. The pod's own
 * processes run in its user namespace (test/fixtures/in_userns.py) with pod uids; the node sees pod uid N as
 * host uid 200000+N.
 */
const pod = (uid: number): Identity => ({ uid, gid: uid, podUserns: true });
const POD_ROOT = pod(0);
const POD_APP = pod(1000);
const POD_PROXY = pod(1337);

type Backend = 'nft' | 'legacy' | 'native';
const backendArgs = (b: Backend) => (b === 'native' ? ['--native-nftables'] : ['--force-iptables-binary', b]);

/** What the namespace holds, in the form its backend lists it (legacy's policy counters zeroed: traffic moves them). */
async function stateOf(ns: Netns, b: Backend): Promise<string> {
  if (b === 'native') return nftListing(ns);
  return `${await saveOf(ns, 'ipv4', b)}\n${await saveOf(ns, 'ipv6', b)}`.replace(/\[\d+:\d+\]/g, '[0:0]');
}

/** The dry-run's rules for one backend, comparable with what the namespace reads back. */
async function dryRunOf(args: readonly string[], b: Backend): Promise<string> {
  const dry = await runCli(['-n', ...args]);
  expect(dry.code).toBe(0);
  return b === 'native' ? dry.stdout : `${splitDryRunFamilies(dry.stdout).ipv4}\n${splitDryRunFamilies(dry.stdout).ipv6}`;
}

/** Another tool's rules, loaded from the node before meshcap runs (none has an owner match, so they load). */
async function loadForeign(ns: Netns, b: Backend): Promise<void> {
  if (b === 'native') {
    await ns.run('nft', ['-f', '-'], { input: 'table inet foreign {\n\tchain out {\n\t\ttype filter hook output priority 10; policy accept;\n\t\tip daddr 203.0.113.99 drop\n\t}\n}\n' });
    return;
  }
  await ns.run(`iptables-${b}-restore`, ['--noflush'], { input: FOREIGN_V4 });
  await ns.run(`ip6tables-${b}-restore`, ['--noflush'], { input: FOREIGN_V6 });
}

/** Lines of a save or listing that start rules (counters differ between a dry-run and a live listing). */
const ruleLines = (text: string) => text.split("\n").filter((l) => /^-A |^\t\t(?!type )[a-z]/.test(l)).map((l) => l.replace(/counter packets \d+ bytes \d+/, 'counter'));

for (const backend of ['nft', 'legacy', 'native'] as const) {
  describe(`a hostUsers: false pod, sidecar defaults from the node (${backend})`, () => {
    let topo: PodTopology | undefined;
    const t = () => topo as PodTopology;
    const args = [...ISTIO_INIT_ARGS, '--ipv6', 'on', ...backendArgs(backend)];
    let before = '';

    beforeAll(async () => {
      topo = await PodTopology.create({ userns: true });
      await loadForeign(t().pod, backend);
      before = await stateOf(t().pod, backend);
      await t().serve(t().pod, POD_PROXY, 'proxy', [15001, 15006]);
      await t().serve(t().pod, POD_APP, 'app', [8080]);
      await t().serve(t().peer, ROOT, 'peer', [9000]);
      const r = await t().meshcap(args);
      expect(r.stderr).not.toContain('"level":50');
      expect(r.exitCode).toBe(0);
    });
    afterAll(async () => {
      await topo?.destroy();
    });

    it('holds exactly the rules the dry-run prints', async () => {
      const want = ruleLines(await dryRunOf(args, backend));
      expect(want.length).toBeGreaterThan(10);
      const foreign = new Set(ruleLines(before));
      expect(foreign.size).toBeGreaterThan(0);
      expect(ruleLines(await stateOf(t().pod, backend)).filter((l) => !foreign.has(l))).toEqual(want);
    });

    it.each([
      ['pod uid 0', POD_ROOT],
      ['pod uid 1000', POD_APP],
      ['host uid 1337, which is not the pod proxy', PROXY],
    ])('sends an outbound connection of %s to 15001 with its original destination', async (_, id) => {
      expect(await t().connect(t().pod, id, ADDR.remoteV4, 9000)).toMatch(new RegExp(`^proxy 15001 ${ADDR.remoteV4} 9000 `));
      expect(await t().connect(t().pod, id, ADDR.remoteV6, 9000)).toMatch(new RegExp(`^proxy 15001 ${ADDR.remoteV6} 9000 `));
    });

    it("lets the pod's proxy (pod uid 1337) reach the peer directly", async () => {
      expect(await t().connect(t().pod, POD_PROXY, ADDR.remoteV4, 9000)).toMatch(/^peer 9000 /);
      expect(await t().connect(t().pod, POD_PROXY, ADDR.remoteV6, 9000)).toMatch(/^peer 9000 /);
    });

    it('sends inbound connections to 15006', async () => {
      expect(await t().connect(t().peer, ROOT, ADDR.podV4, 8080)).toMatch(new RegExp(`^proxy 15006 ${ADDR.podV4} 8080 `));
    });

    it('is read by trace and precheck from the node: the UIDs in the rules are the pod\'s', async () => {
      const { file, args: pre } = entryCommand();
      const trace = (uid: number) => execa(file, [...pre, 'trace', '--netns', t().pod.path, '--dst', ADDR.remoteV4, '--dport', '9000', '--uid', String(uid)], { reject: false });
      const app = await trace(1000);
      expect(app.exitCode).toBe(0);
      expect(app.stdout).toMatch(/verdict: redirected to local port 15001/);
      expect((await trace(1337)).stdout).not.toMatch(/verdict: redirected/);
      // The test proxy is python3, not envoy: precheck names it as the pod sees it (uid 1337, not 201337), and
      // the listeners on 15001/15006 belong to the proxy's uid (no MCP011 "held by another uid").
      const precheck = await execa(file, [...pre, 'precheck', '--netns', t().pod.path], { reject: false });
      expect(precheck.stderr).not.toContain('"level":50');
      expect(precheck.stdout).toMatch(/MCP020\] .* process python3\(pid \d+\) runs as uid 1337,/);
      expect(precheck.stdout).not.toMatch(/MCP01[12]|201337/);
    });

    it('re-applies as a no-op, verifies equal, and --cleanup-only leaves the namespace as it was', async () => {
      const again = await t().meshcap(args);
      expect(again.exitCode).toBe(0);
      const verify = await t().meshcap([...args, '--verify']);
      expect(verify.stdout + verify.stderr).not.toContain('"level":50');
      expect(verify.exitCode).toBe(0);
      const clean = await t().meshcap([...args, '--cleanup-only']);
      expect(clean.exitCode).toBe(0);
      expect(await stateOf(t().pod, backend)).toBe(before);
      expect((await t().meshcap(args)).exitCode).toBe(0);
    });
  });
}

describe('a hostUsers: false pod, ambient in-pod rules from the node', () => {
  let topo: PodTopology | undefined;
  const t = () => topo as PodTopology;
  const args = ['ambient', '--inbound', 'redirect', '--ipv6', 'on'];

  beforeAll(async () => {
    topo = await PodTopology.create({ userns: true });
    await loadForeign(t().pod, 'nft');
    await t().serve(t().pod, POD_ROOT, 'ztunnel', [15001, 15006]);
    await t().serve(t().pod, POD_APP, 'app', [8080]);
    await t().serve(t().peer, ROOT, 'peer', [9000]);
  });
  afterAll(async () => {
    await topo?.destroy();
  });

  it('applies, captures outbound and inbound, verifies equal and cleans up exactly', async () => {
    const before = await stateOf(t().pod, 'nft');
    const r = await t().meshcap(args);
    expect(r.stderr).not.toContain('"level":50');
    expect(r.exitCode).toBe(0);
    expect(await t().connect(t().pod, POD_APP, ADDR.remoteV4, 9000)).toMatch(new RegExp(`^ztunnel 15001 ${ADDR.remoteV4} 9000 `));
    expect(await t().connect(t().peer, ROOT, ADDR.podV4, 8080)).toMatch(new RegExp(`^ztunnel 15006 ${ADDR.podV4} 8080 `));
    expect((await t().meshcap([...args, '--verify'])).exitCode).toBe(0);
    expect((await t().meshcap([...args, '--cleanup-only'])).exitCode).toBe(0);
    expect(await stateOf(t().pod, 'nft')).toBe(before);
  });

  it('still applies to a pod in the node\'s own user namespace (the fallback only reads the owner)', async () => {
    await withNetns(async (plain) => {
      const r = await meshcapIn(plain, [...ISTIO_INIT_ARGS, '--ipv6', 'off'], { MESHCAP_NATIVE: 'spawn' });
      expect(r.exitCode).toBe(0);
      expect(await saveOf(plain, 'ipv4', 'nft')).toContain('-A ISTIO_OUTPUT -m owner --uid-owner 1337 -j RETURN');
    }, 'mcusplain');
  });
});

describe('a restore that fails for another reason', () => {
  it('names the reason iptables-nft-restore gives on the line after its banner, and changes nothing', async () => {
    await withNetns(async (ns) => {
      // A native chain where iptables-nft expects nat's OUTPUT: the kernel refuses iptables-nft's chain.
      await ns.run('nft', ['-f', '-'], { input: 'table ip nat {\n chain OUTPUT { type filter hook output priority 0; }\n}\n' });
      const before = await nftListing(ns);
      const r = await meshcapIn(ns, [...ISTIO_INIT_ARGS, '--ipv6', 'off']);
      expect(r.exitCode).toBe(4);
      const line = r.stderr.split('\n').find((l) => l.includes('"level":50')) ?? '';
      expect(line).toMatch(/iptables-nft-restore --noflush failed \(exit 4\): line \d+: CHAIN_ADD failed \(Operation not supported\): chain OUTPUT/);
      expect(line).not.toContain('v1.8');
      expect(await nftListing(ns)).toBe(before);
    }, 'mcuserr');
  });
});

describe('a hostUsers: false pod where the native call is unavailable', () => {
  let topo: PodTopology | undefined;
  const t = () => topo as PodTopology;
  beforeAll(async () => {
    topo = await PodTopology.create({ userns: true });
  });
  afterAll(async () => {
    await topo?.destroy();
  });

  it('fails with exit 5 naming the user namespace and the missing call, the namespace unchanged', async () => {
    const before = await stateOf(t().pod, 'nft');
    const r = await t().meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on'], t().pod, { MESHCAP_NATIVE: 'spawn' });
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toMatch(/belongs to another user namespace \(user:\[\d+\], a pod with hostUsers: false\).*needs ioctl\(NS_GET_USERNS\)/);
    expect(await stateOf(t().pod, 'nft')).toBe(before);
  });
});

/** meshcap-cni from the node, as a runtime calls it for a hostUsers: false pod. */
const INJECTED = INJECTED_POD;
const cni = (command: string, ns: Netns, conf: object, env: Record<string, string> = {}) => runCni(command, ns, conf, { id: 'uspod', env });

describe('meshcap-cni on a hostUsers: false pod', () => {
  let topo: PodTopology | undefined;
  const t = () => topo as PodTopology;
  beforeAll(async () => {
    topo = await PodTopology.create({ userns: true });
    await loadForeign(t().pod, 'nft');
    await t().serve(t().pod, POD_PROXY, 'proxy', [15001, 15006]);
    await t().serve(t().peer, ROOT, 'peer', [9000]);
  });
  afterAll(async () => {
    await topo?.destroy();
  });

  it.each([
    ['iptables', {}, 'nft' as const],
    ['native nftables', { native_nftables: true }, 'native' as const],
  ])('sidecar (%s): ADD captures the app, CHECK passes then sees a flush, DEL leaves the foreign rules', async (_, extra, backend) => {
    const before = await stateOf(t().pod, backend);
    const conf = { ...INJECTED, ...extra };
    const add = await cni('ADD', t().pod, conf);
    expect(add.stdout).not.toContain('"code"');
    expect(add.exitCode).toBe(0);
    const foreign = new Set(ruleLines(before));
    const dry = await dryRunOf([...ISTIO_CNI_FLAGS, ...(backend === 'native' ? ['--native-nftables'] : [])], backend);
    expect(ruleLines(await stateOf(t().pod, backend)).filter((l) => !foreign.has(l))).toEqual(ruleLines(dry));
    expect(await t().connect(t().pod, POD_APP, ADDR.remoteV4, 9000)).toMatch(new RegExp(`^proxy 15001 ${ADDR.remoteV4} 9000 `));
    expect(await t().connect(t().pod, POD_PROXY, ADDR.remoteV4, 9000)).toMatch(/^peer 9000 /);
    expect((await cni('CHECK', t().pod, conf)).exitCode).toBe(0);
    if (backend === 'native') await t().pod.run('nft', ['delete', 'table', 'inet', 'istio-proxy-nat']);
    else await t().pod.run('iptables-nft', ['-t', 'nat', '-F', 'ISTIO_OUTPUT']);
    expect((await cni('CHECK', t().pod, conf)).exitCode).not.toBe(0);
    expect((await cni('DEL', t().pod, conf)).exitCode).toBe(0);
    expect(await stateOf(t().pod, backend)).toBe(before);
  });

  it('ambient: ADD installs the in-pod rules, CHECK passes, DEL removes them', async () => {
    const before = await stateOf(t().pod, 'nft');
    const conf = { mode: 'ambient', inbound: 'redirect' };
    const add = await cni('ADD', t().pod, conf);
    expect(add.stdout).not.toContain('"code"');
    expect(add.exitCode).toBe(0);
    expect(await stateOf(t().pod, 'nft')).toContain('-m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15006');
    expect((await cni('CHECK', t().pod, conf)).exitCode).toBe(0);
    expect((await cni('DEL', t().pod, conf)).exitCode).toBe(0);
    expect(await stateOf(t().pod, 'nft')).toBe(before);
  });

  it('answers a CNI error naming the user namespace when the native call is unavailable, and applies nothing', async () => {
    const before = await stateOf(t().pod, 'nft');
    const add = await cni('ADD', t().pod, INJECTED, { MESHCAP_NATIVE: 'spawn' });
    expect(add.exitCode).not.toBe(0);
    expect(JSON.parse(add.stdout).msg).toMatch(/belongs to another user namespace .*needs ioctl\(NS_GET_USERNS\)/);
    expect(await stateOf(t().pod, 'nft')).toBe(before);
  });
});

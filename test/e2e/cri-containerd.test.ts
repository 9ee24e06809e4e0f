import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateContainerd } from '../helpers/cri/containerd.js';
import { connectFrom, holdNamespace, iptablesSaveIn, listenIn, type Listener } from '../helpers/cri/traffic.js';
import { requireRoot } from '../helpers/netns.js';
import { entryCommand, IMPL } from '../helpers/paths.js';

requireRoot();

/**
 * meshcap-cni under containerd's CRI, as on a Kubernetes node: a private containerd 1.6 runs pod sandboxes
 * (RunPodSandbox with the pod's annotations, exactly as kubelet sends them) on [bridge + host-local,
 * meshcap-cni], and the plugin decides from the annotations alone which pods it captures.
 * Runs the Node build, or with MESHCAP_IMPL=bin the executable.
 */

const CAPABILITY = { 'io.kubernetes.cri.pod-annotations': true };
const status = (initContainers: string[] | null, containers: string[] | null) => JSON.stringify({ initContainers, containers, volumes: ['istio-envoy'], imagePullSecrets: null, revision: 'default' });
const INJECTED = { 'sidecar.istio.io/status': status(['istio-validation'], ['istio-proxy']) };
const NATIVE = { 'sidecar.istio.io/status': status(['istio-validation', 'istio-proxy'], null) };
/** The platform team's policy on this node: no pod outside istio-system may exclude interfaces from capture. */
const BYPASS_POLICY = { deny: ['traffic.sidecar.istio.io/excludeInterfaces'], allow_namespaces: ['istio-system'] };
const hostHasIstio = async () => (await execa('iptables-save', [], { reject: false })).stdout.includes('ISTIO_');
const pluginErrors = (lab: PrivateContainerd) => readFileSync(lab.pluginLog, 'utf8').split('\n').filter((l) => l.includes('"level":50'));

describe(`meshcap-cni (${IMPL}) on a sidecar network under containerd's CRI`, () => {
  let lab: PrivateContainerd | undefined;
  const L = () => lab as PrivateContainerd;
  let peer: { id: string; ip: string; netns: string; listener: Listener } | undefined;
  const P = () => peer as NonNullable<typeof peer>;
  let hostIstioBefore = false;

  beforeAll(async () => {
    hostIstioBefore = await hostHasIstio();
    lab = new PrivateContainerd('198.51.100.0/24');
    L().installPlugin(entryCommand('meshcap-cni'));
    L().writeConflist([{ type: 'meshcap-cni', mode: 'sidecar', ipv6: 'off', capabilities: CAPABILITY, log_file: L().pluginLog, bypass_policy: BYPASS_POLICY }]);
    await L().start();
    // A pod that is not in the mesh, listening on 9000: where un-captured traffic lands, and the client of inbound tests.
    const id = await L().runPod('peer', 'default');
    const st = await L().cri.podSandboxStatus(id);
    peer = { id, ip: st.ip, netns: st.netns, listener: await listenIn(st.netns, 'peer', 9000) };
  }, 90_000);

  afterAll(async () => {
    await peer?.listener.stop();
    await lab?.destroy();
    expect(await lab?.residue()).toEqual([]);
  }, 90_000);

  it('counts what a running pod holds (so a count of zero means something): its netns mount, veth, lease and sandbox', async () => {
    expect(await L().leftovers()).toEqual({ netnsMounts: 1, veths: 1, leases: 1, lockFiles: 0, sandboxes: 1 });
  });

  it('redirects an injected pod\'s real TCP: outbound to 15001, inbound to 15006, and DEL on stop removes the rules', async () => {
    const id = await L().runPod('web', 'default', { ...INJECTED, 'traffic.sidecar.istio.io/excludeOutboundPorts': '9999' });
    const { netns, ip } = await L().cri.podSandboxStatus(id);
    const rules = await iptablesSaveIn(netns);
    expect(rules).toContain('-A ISTIO_OUTPUT -j ISTIO_REDIRECT');
    expect(rules).toContain('--dport 9999 -j RETURN');
    const proxy = await listenIn(netns, 'outbound', 15001, 1337);
    const inbound = await listenIn(netns, 'inbound', 15006, 1337);
    const held = await holdNamespace(netns);
    try {
      expect(await connectFrom(netns, P().ip, 9000)).toMatch(new RegExp(`^outbound 15001 ${P().ip.replace(/\./g, '\\.')} 9000 `));
      expect(await connectFrom(P().netns, ip, 8080)).toMatch(new RegExp(`^inbound 15006 ${ip.replace(/\./g, '\\.')} 8080 `));
      await proxy.stop();
      await inbound.stop();
      await L().cri.stopPodSandbox(id);
      expect(await held.save()).not.toContain('ISTIO_');
    } finally {
      await proxy.stop();
      await inbound.stop();
      await held.release();
    }
    // A second stop (DEL again, netns gone) and the remove (DEL with an empty CNI_NETNS) succeed.
    await L().cri.stopPodSandbox(id);
    await L().cri.removePodSandbox(id);
    expect(pluginErrors(L())).toEqual([]);
  });

  it('captures the native-sidecar form (istio-proxy among the init containers)', async () => {
    const id = await L().runPod('native', 'default', NATIVE);
    const { netns } = await L().cri.podSandboxStatus(id);
    expect(await iptablesSaveIn(netns)).toContain('-A OUTPUT -j ISTIO_OUTPUT');
    const proxy = await listenIn(netns, 'outbound', 15001, 1337);
    try {
      expect(await connectFrom(netns, P().ip, 9000)).toMatch(/^outbound 15001 /);
    } finally {
      await proxy.stop();
    }
    await L().removePod(id);
  });

  it.each<[string, string, Record<string, string>]>([
    ['no annotations (containerd passes null)', 'default', {}],
    ['only unrelated annotations', 'default', { 'example.com/owner': 'team a; b=c', 'prometheus.io/scrape': 'true' }],
    ['inject "false" on an injected pod', 'default', { ...INJECTED, 'sidecar.istio.io/inject': 'false' }],
    ['istio-init listed (the init container sets the rules)', 'default', { 'sidecar.istio.io/status': status(['istio-init'], ['istio-proxy']) }],
    ['an injected pod in kube-system', 'kube-system', INJECTED],
  ])('leaves a pod with %s untouched: no rules, traffic goes straight through', async (_name, namespace, annotations) => {
    const name = `plain-${Math.random().toString(16).slice(2, 8)}`;
    const id = await L().runPod(name, namespace, annotations);
    const { netns } = await L().cri.podSandboxStatus(id);
    expect(await iptablesSaveIn(netns)).not.toContain('ISTIO_');
    expect(await connectFrom(netns, P().ip, 9000)).toMatch(new RegExp(`^peer 9000 ${P().ip.replace(/\./g, '\\.')} 9000 `));
    await L().removePod(id);
    expect(readFileSync(L().pluginLog, 'utf8')).toContain('"msg":"pod passes through untouched"');
  });

  it.each<[string, Record<string, string>, string]>([
    ['a bad traffic annotation', { ...INJECTED, 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '10.0.0.0/33' }, 'traffic.sidecar.istio.io/excludeOutboundIPRanges="10.0.0.0/33"'],
    ['a status annotation that is not JSON', { 'sidecar.istio.io/status': 'injected' }, 'sidecar.istio.io/status="injected"'],
    ['an annotation the bypass policy denies', { ...INJECTED, 'traffic.sidecar.istio.io/excludeInterfaces': 'eth1' },
      'bypass_policy denies annotation traffic.sidecar.istio.io/excludeInterfaces="eth1" in namespace "default" (allowed: istio-system)'],
  ])('fails RunPodSandbox naming %s, and leaves no sandbox, netns, veth, lease or rule', async (_name, annotations, named) => {
    const before = await L().leftovers();
    await expect(L().runPod('bad', 'default', annotations)).rejects.toThrow(named);
    // Whatever kubelet could still see of the sandbox stops and goes cleanly (DEL never fails on annotations).
    for (const p of (await L().cri.listPodSandbox()).filter((s) => s.name === 'bad')) await L().removePod(p.id);
    expect(await L().leftovers()).toEqual(before);
    expect(await hostHasIstio()).toBe(hostIstioBefore);
  });

  it('applies the exclusion the bypass policy denies elsewhere in its allowed namespace', async () => {
    const id = await L().runPod('allowed', 'istio-system', { ...INJECTED, 'traffic.sidecar.istio.io/excludeInterfaces': 'eth1' });
    const { netns } = await L().cri.podSandboxStatus(id);
    expect(await iptablesSaveIn(netns)).toContain('-A OUTPUT -o eth1 -j RETURN');
    await L().removePod(id);
  });

  it('leaves nothing behind on the host: no ISTIO_ rules in the node\'s namespace, no errors from DEL', async () => {
    expect(await hostHasIstio()).toBe(hostIstioBefore);
    expect(pluginErrors(L()).filter((l) => !l.includes('"command":"ADD"'))).toEqual([]);
  });
});

describe(`meshcap-cni (${IMPL}) on an ambient network under containerd's CRI`, () => {
  let lab: PrivateContainerd | undefined;
  const L = () => lab as PrivateContainerd;

  beforeAll(async () => {
    lab = new PrivateContainerd('203.0.113.0/24');
    L().installPlugin(entryCommand('meshcap-cni'));
    L().writeConflist([{ type: 'meshcap-cni', mode: 'ambient', inbound: 'redirect', ipv6: 'off', capabilities: CAPABILITY, log_file: L().pluginLog }]);
    await L().start();
  }, 90_000);

  afterAll(async () => {
    await lab?.destroy();
    expect(await lab?.residue()).toEqual([]);
  }, 90_000);

  it.each<[string, Record<string, string>, boolean]>([
    ['a pod without annotations', {}, true],
    ['a restarted pod Istio marked "pending"', { 'ambient.istio.io/redirection': 'pending' }, true],
    ['a pod marked "enabled"', { 'ambient.istio.io/redirection': 'enabled' }, true],
    ['a pod that opts out ("disabled")', { 'ambient.istio.io/redirection': 'disabled' }, false],
    ['a sidecar pod', INJECTED, false],
  ])('%s: enrolled = %s', async (_name, annotations, enrolled) => {
    const id = await L().runPod(`amb-${Math.random().toString(16).slice(2, 8)}`, 'default', annotations);
    const { netns } = await L().cri.podSandboxStatus(id);
    const rules = await iptablesSaveIn(netns);
    const ipRules = (await execa('nsenter', [`--net=${netns}`, '--', 'ip', 'rule'], { reject: false })).stdout;
    if (enrolled) {
      expect(rules).toContain('-A PREROUTING -j ISTIO_PRERT');
      expect(ipRules).toMatch(/fwmark 0x111\/0xfff lookup 100/);
    } else {
      expect(rules).not.toContain('ISTIO_');
      expect(ipRules).not.toContain('fwmark');
    }
    await L().removePod(id);
    expect(pluginErrors(L())).toEqual([]);
  });
});

import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentArgs, meshcap, startAgent, waitFor, type Agent } from '../helpers/cri/agent.js';
import { PrivateContainerd } from '../helpers/cri/containerd.js';
import { iptablesSaveIn, nsExec } from '../helpers/cri/traffic.js';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { IMPL } from '../helpers/paths.js';

requireRoot();

/**
 * `meshcap node-agent` on an ambient network with `probe_ipset`: pods that started before the entry was in
 * the chain get their in-pod redirection and their addresses in the node's kubelet probe set, and both come
 * back when lost. The agent runs in a namespace made for the test, standing in for the node's (the node side
 * is written there, never in the machine's own). No pod is created or removed while our entry is in the
 * conflist (ADD and DEL would keep the probe set of the machine's own namespace), so the entry is taken out
 * before the lab goes.
 */

const INJECTED = { 'sidecar.istio.io/status': JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };
const SET = 'istio-inpod-probes-v4';
const hostSets = async () => (await execa('ipset', ['list', '-n'], { reject: false })).stdout;

describe(`meshcap node-agent (${IMPL}) on an ambient network with the node's probe set`, () => {
  let lab: PrivateContainerd | undefined;
  const L = () => lab as PrivateContainerd;
  let node: Netns | undefined;
  const N = () => node as Netns;
  let agent: Agent | undefined;
  const A = () => agent as Agent;
  const pods = new Map<string, { id: string; netns: string; ip: string }>();
  const P = (name: string) => pods.get(name) as { id: string; netns: string; ip: string };
  let setsBefore = '';
  const conf = () => ({ mode: 'ambient', inbound: 'redirect', ipv6: 'off', probe_ipset: true, exclude_namespaces: ['kube-system'], log_file: L().pluginLog });
  const members = async () => (await N().tryRun('ipset', ['list', SET])).stdout.split('\n').filter((l) => /^\d+\.\d+\.\d+\.\d+/.test(l)).map((l) => l.split(' ')[0]);
  const sweeps = () => A().logged('swept').length;

  beforeAll(async () => {
    setsBefore = await hostSets();
    node = await createNetns('mcagn');
    await N().run('ip', ['link', 'set', 'lo', 'up']);
    lab = new PrivateContainerd('203.0.113.128/25');
    L().writeConflist([]);
    await L().start();
    await Promise.all(
      Object.entries({ amb: {}, enabled: { 'ambient.istio.io/redirection': 'enabled' }, disabled: { 'ambient.istio.io/redirection': 'disabled' }, sidecar: INJECTED }).map(async ([name, ann]) => {
        const id = await L().runPod(name, 'default', ann);
        const st = await L().cri.podSandboxStatus(id);
        pods.set(name, { id, netns: st.netns, ip: st.ip });
      }),
    );
  }, 120_000);

  afterAll(async () => {
    agent?.kill();
    if (lab !== undefined) {
      // Out of the chain first: the pods' DELs then never reach meshcap-cni (nor the machine's probe set).
      await execa(meshcap.file, [...meshcap.args, ...agentArgs(L(), conf(), 0, ['--uninstall'])], { reject: false });
      await lab.destroy();
      expect(await lab.residue()).toEqual([]);
    }
    await deleteNetns(node);
    expect(await hostSets()).toBe(setsBefore);
  }, 120_000);

  it('captures the ambient pods that started before it — in-pod rules, ip rule, probe set member — and leaves an opted-out and a sidecar pod alone', async () => {
    agent = startAgent(L(), conf(), [], N().name);
    // The first sweep's end (its apply writes the rules, then the routing, then the node's set).
    await waitFor('the first sweep', () => sweeps() >= 1, 30_000);
    for (const name of ['amb', 'enabled']) expect(await iptablesSaveIn(P(name).netns)).toContain('-A PREROUTING -j ISTIO_PRERT');
    expect((await nsExec(P('amb').netns, ['ip', 'rule'])).stdout).toMatch(/fwmark 0x111\/0xfff lookup 100/);
    expect((await members()).sort()).toEqual([P('amb').ip, P('enabled').ip].sort());
    expect((await N().run('ipset', ['list', SET])).stdout).toContain(`comment "${P('amb').id}/eth0"`);
    expect((await N().run('iptables-save', [])).stdout).toContain('-A POSTROUTING -j ISTIO_POSTRT');
    for (const name of ['disabled', 'sidecar']) expect(await iptablesSaveIn(P(name).netns)).not.toContain('ISTIO_');
    expect(A().logged('swept')[0]).toMatchObject({ repairs: 3, notEnrolled: 2 });
    expect(await hostSets()).toBe(setsBefore);
  });

  it('puts a lost probe-set member and flushed in-pod rules back within two sweeps', async () => {
    await N().run('ipset', ['del', SET, P('amb').ip]);
    await nsExec(P('enabled').netns, ['iptables', '-t', 'nat', '-F']);
    await nsExec(P('enabled').netns, ['iptables', '-t', 'mangle', '-F']);
    const n = sweeps();
    await waitFor('the member back', async () => (await members()).includes(P('amb').ip), 15_000);
    await waitFor('the rules back', async () => (await iptablesSaveIn(P('enabled').netns)).includes('-A PREROUTING -j ISTIO_PRERT'), 15_000);
    await waitFor('the repairing sweep logged', () => A().logged('swept').slice(n).some((r) => Number(r['repairs']) >= 1));
    const repairs = A().logged('swept').slice(n, n + 2).reduce((k, r) => k + Number(r['repairs']), 0);
    expect(repairs).toBe(2);
    expect(A().logged('repaired node probe set').at(-1)).toMatchObject({ missing: [P('amb').ip] });
    expect(A().logged('repaired pod').at(-1)).toMatchObject({ name: 'enabled', found: 'bypassing' });
  });

  it('stops on SIGTERM leaving the entry and the node side in place', async () => {
    expect((await A().stop('SIGTERM')).exitCode).toBe(0);
    expect((await members()).length).toBe(2);
    expect(await iptablesSaveIn(P('amb').netns)).toContain('-A PREROUTING -j ISTIO_PRERT');
  });
});

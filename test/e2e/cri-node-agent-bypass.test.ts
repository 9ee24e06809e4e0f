import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meshcap, startAgent, waitFor, type Agent } from '../helpers/cri/agent.js';
import { PrivateContainerd } from '../helpers/cri/containerd.js';
import { iptablesSaveIn } from '../helpers/cri/traffic.js';
import { requireRoot } from '../helpers/netns.js';
import { IMPL } from '../helpers/paths.js';

requireRoot();

/**
 * The bypass policy on the node agent's side (issue 20): pods that started before meshcap-cni was in the
 * chain, one carrying an annotation the policy denies in its namespace, one carrying it where it is allowed.
 * The agent captures the allowed one and never writes the denied one; node-status reports it as `error`
 * naming the policy.
 */
const INJECTED = { 'sidecar.istio.io/status': JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };
const EXCLUDE = { 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '203.0.113.0/24' };
const POLICY = { deny: ['traffic.sidecar.istio.io/excludeOutboundIPRanges'], allow_namespaces: ['istio-system'] };

describe(`meshcap node-agent (${IMPL}) with a bypass_policy`, () => {
  let lab: PrivateContainerd | undefined;
  const L = () => lab as PrivateContainerd;
  let agent: Agent | undefined;
  const netns = new Map<string, string>();

  beforeAll(async () => {
    lab = new PrivateContainerd('198.51.100.128/25');
    L().writeConflist([]);
    await L().start();
    for (const [name, ns] of [['denied', 'apps'], ['allowed', 'istio-system']] as const) {
      const id = await L().runPod(name, ns, { ...INJECTED, ...EXCLUDE });
      netns.set(name, (await L().cri.podSandboxStatus(id)).netns);
    }
  }, 120_000);

  afterAll(async () => {
    agent?.kill();
    await lab?.destroy();
    expect(await lab?.residue()).toEqual([]);
  }, 120_000);

  it('captures the pod in an allowed namespace, never writes the denied one, and node-status names the policy', async () => {
    const deniedBefore = await iptablesSaveIn(netns.get('denied') ?? '');
    const conf = { mode: 'sidecar', ipv6: 'off', log_file: L().pluginLog, bypass_policy: POLICY };
    agent = startAgent(L(), conf);
    const a = agent;
    await waitFor('two sweeps', () => a.logged('swept').length >= 2, 60_000);
    expect(await iptablesSaveIn(netns.get('allowed') ?? '')).toContain('-A ISTIO_OUTPUT -d 203.0.113.0/24 -j RETURN');
    expect(await iptablesSaveIn(netns.get('denied') ?? '')).toBe(deniedBefore);
    const status = await execa(meshcap.file, [...meshcap.args, 'node-status', '--cri-socket', L().socket, '--cni-conf-dir', L().confDir, '--json'], { reject: false });
    const pods = (JSON.parse(status.stdout) as { pods: { name: string; state: string; reason: string }[] }).pods;
    expect(pods.find((p) => p.name === 'allowed')).toMatchObject({ state: 'captured' });
    expect(pods.find((p) => p.name === 'denied')).toMatchObject({
      state: 'error',
      reason: expect.stringMatching(/^bypass_policy denies annotation traffic\.sidecar\.istio\.io\/excludeOutboundIPRanges="203\.0\.113\.0\/24" in namespace "apps"/),
    });
    expect(a.logged('swept').at(-1)).toMatchObject({ repairs: 0 });
  }, 120_000);
});

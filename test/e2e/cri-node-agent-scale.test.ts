import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, waitFor, type Agent } from '../helpers/cri/agent.js';
import { PrivateContainerd } from '../helpers/cri/containerd.js';
import { iptablesSaveIn } from '../helpers/cri/traffic.js';
import { requireRoot } from '../helpers/netns.js';
import { IMPL } from '../helpers/paths.js';

requireRoot();

/**
 * `meshcap node-agent` at node scale: 50 injected pods started (8 at a time, through the CRI) while the
 * node's conflist had no meshcap entry; the agent captures them all within two sweeps, and a sweep over 50
 * captured pods then only reads (its time and processes are logged, and printed for docs/performance.md).
 */

const N = 50;
const INJECTED = { 'sidecar.istio.io/status': JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };

describe(`meshcap node-agent (${IMPL}) over ${N} pods that started before it`, () => {
  let lab: PrivateContainerd | undefined;
  const L = () => lab as PrivateContainerd;
  let agent: Agent | undefined;
  const ids: string[] = [];

  beforeAll(async () => {
    lab = new PrivateContainerd('203.0.113.0/24');
    L().writeConflist([]);
    await L().start();
    const names = Array.from({ length: N }, (_, i) => `scale${i}`);
    for (let i = 0; i < N; i += 8) ids.push(...(await Promise.all(names.slice(i, i + 8).map((n) => L().runPod(n, 'default', INJECTED)))));
  }, 180_000);

  afterAll(async () => {
    agent?.kill();
    await lab?.destroy();
    expect(await lab?.residue()).toEqual([]);
  }, 180_000);

  it(`captures all ${N} within two sweeps, and a sweep over ${N} captured pods only reads`, async () => {
    const netns = (await L().cri.podSandboxStatus(ids[0] ?? '')).netns;
    expect(await iptablesSaveIn(netns)).not.toContain('ISTIO_');
    agent = startAgent(L(), { mode: 'sidecar', ipv6: 'off', log_file: L().pluginLog });
    const a = agent;
    await waitFor('three sweeps', () => a.logged('swept').length >= 3, 120_000);
    const [first, second, third] = a.logged('swept');
    expect((Number(first?.['repairs']) || 0) + (Number(second?.['repairs']) || 0)).toBe(N);
    expect(third).toMatchObject({ pods: N, captured: N, bypassing: 0, drifted: 0, errors: 0, repairs: 0 });
    const perPod = Number(third?.['processes']) / N;
    expect(Number.isInteger(perPod) && perPod <= 3).toBe(true);
    expect(await iptablesSaveIn(netns)).toContain('-A ISTIO_OUTPUT -j ISTIO_REDIRECT');
    console.log(`[bench] node-agent (${IMPL}) sweep over ${N} captured pods: ${third?.['ms']} ms, ${third?.['processes']} processes (${perPod} per pod); first sweep (${first?.['repairs']} repairs): ${first?.['ms']} ms, ${first?.['processes']} processes`);
  }, 180_000);
});

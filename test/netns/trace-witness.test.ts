import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { ADDR, APP, PROXY, ROOT, PodTopology } from '../helpers/topology.js';
import { traceInProcess } from './trace-harness.js';
import { kernelWalk } from './trace-witness.js';

requireRoot();

/**
 * Beyond where a connection lands: the rules trace says decided are the rules the kernel reports it ran
 * (xtables-monitor --trace, nft backend), for istio-init's defaults and the three classic flows.
 */
describe("trace's path against the kernel's own trace (nft, istio-init defaults)", () => {
  let topo: PodTopology | undefined;
  const t = () => topo as PodTopology;
  beforeAll(async () => {
    topo = await PodTopology.create();
    await t().serve(t().pod, PROXY, 'proxy', [15001, 15006]);
    await t().serve(t().pod, ROOT, 'app', [8080]);
    await t().serve(t().peer, ROOT, 'peer', [9000]);
    const r = await t().meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'off', '--force-iptables-binary', 'nft']);
    expect(r.exitCode, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await topo?.destroy();
  });

  const predicted = async (args: readonly string[]) => (await traceInProcess(['trace', '--netns', t().pod.path, ...args, '--json'])).path.map((s) => `${s.table} ${s.rule}`);

  it('app -> service: the same rules, in order', async () => {
    const want = await predicted(['--dst', ADDR.remoteV4, '--dport', '9000', '--uid', '1000', '--gid', '1000']);
    const got = await kernelWalk(t().pod, [9000], () => t().connect(t().pod, APP, ADDR.remoteV4, 9000));
    expect(want).toHaveLength(3);
    expect(got).toEqual(want);
  });

  it('proxy -> service: the same rules, in order', async () => {
    const want = await predicted(['--dst', ADDR.remoteV4, '--dport', '9000', '--uid', '1337', '--gid', '1337']);
    const got = await kernelWalk(t().pod, [9000], () => t().connect(t().pod, PROXY, ADDR.remoteV4, 9000));
    expect(want).toContain('nat -A ISTIO_OUTPUT -m owner --uid-owner 1337 -j RETURN');
    expect(got).toEqual(want);
  });

  it('peer -> app: the same rules, in order', async () => {
    const want = await predicted(['--direction', 'inbound', '--src', ADDR.peerV4, '--dst', ADDR.podV4, '--dport', '8080']);
    const got = await kernelWalk(t().pod, [8080], () => t().connect(t().peer, APP, ADDR.podV4, 8080));
    expect(want).toContain('nat -A ISTIO_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006');
    expect(got).toEqual(want);
  });
});

import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { saveOf } from '../helpers/meshcap.js';
import { netnsPool, requireRoot, type Netns } from '../helpers/netns.js';
import { entryCommand } from '../helpers/paths.js';
import { Annotation } from '../../src/config/annotations.js';

requireRoot();

/**
 * The bypass policy at the CNI door, in real namespaces: an enrolled pod outside `allow_namespaces` carrying a
 * denied annotation fails ADD (and CHECK) naming the annotation, its value and bypass_policy, and its namespace
 * is left byte-identical; DEL always succeeds; allowed namespaces, other annotations and no annotation apply.
 */
const cni = entryCommand('meshcap-cni');
const STATUS = { [Annotation.status]: JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };
const POLICY = { deny: [Annotation.excludeOutboundIPRanges, Annotation.excludeInterfaces], allow_namespaces: ['istio-system'] };

function run(command: string, pod: Netns, opts: { namespace: string; annotations?: Record<string, string>; policy?: object }) {
  const conf = {
    cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', ipv6: 'off', force_iptables_binary: 'nft', bypass_policy: opts.policy ?? POLICY,
    capabilities: { 'io.kubernetes.cri.pod-annotations': true },
    runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { ...STATUS, ...opts.annotations } },
    prevResult: { cniVersion: '1.0.0', ips: [{ address: '198.51.100.2/24' }] },
  };
  const env = { CNI_COMMAND: command, CNI_CONTAINERID: 'bypass0', CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni', CNI_ARGS: `K8S_POD_NAMESPACE=${opts.namespace};K8S_POD_NAME=web` };
  return execa(cni.file, cni.args, { reject: false, input: JSON.stringify(conf), env });
}

/** Everything meshcap could have written into the namespace: both iptables backends and nft. */
async function snapshot(pod: Netns): Promise<string> {
  const nft = await pod.run('nft', ['list', 'ruleset']);
  return [await saveOf(pod, 'ipv4', 'nft'), await saveOf(pod, 'ipv4', 'legacy'), await saveOf(pod, 'ipv6', 'nft'), nft.stdout].join('\n--\n');
}

const msgOf = (r: { stdout: string }) => (JSON.parse(r.stdout) as { code: number; msg: string });

describe('bypass_policy at meshcap-cni ADD, CHECK and DEL', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);

  it('refuses a denied annotation outside the allowed namespaces, naming it, its value and the policy; the namespace is untouched', async () => {
    const pod = await pool.make('mcbyp');
    const before = await snapshot(pod);
    const annotations = { [Annotation.excludeOutboundIPRanges]: '203.0.113.0/24' };
    const add = await run('ADD', pod, { namespace: 'apps', annotations });
    expect(add.exitCode).toBe(1);
    expect(msgOf(add)).toEqual({
      cniVersion: '1.0.0', code: 103,
      msg: `bypass_policy denies annotation ${Annotation.excludeOutboundIPRanges}="203.0.113.0/24" in namespace "apps" (allowed: istio-system)`,
    });
    expect(await snapshot(pod)).toBe(before);
    const check = await run('CHECK', pod, { namespace: 'apps', annotations });
    expect(check.exitCode).toBe(1);
    expect(msgOf(check).msg).toBe(msgOf(add).msg);
    const del = await run('DEL', pod, { namespace: 'apps', annotations });
    expect(del.exitCode).toBe(0);
    expect(await snapshot(pod)).toBe(before);
  });

  it('applies the same exclusion in an allowed namespace, and CHECK passes', async () => {
    const pod = await pool.make('mcbypok');
    const opts = { namespace: 'istio-system', annotations: { [Annotation.excludeOutboundIPRanges]: '203.0.113.0/24' } };
    expect((await run('ADD', pod, opts)).exitCode).toBe(0);
    expect(await saveOf(pod, 'ipv4', 'nft')).toContain('-A ISTIO_OUTPUT -d 203.0.113.0/24 -j RETURN');
    expect((await run('CHECK', pod, opts)).exitCode).toBe(0);
    expect((await run('DEL', pod, opts)).exitCode).toBe(0);
  });

  it('applies an annotation the policy does not deny, and a pod with no annotation', async () => {
    const other = await pool.make('mcbypother');
    expect((await run('ADD', other, { namespace: 'apps', annotations: { [Annotation.excludeOutboundPorts]: '3306' } })).exitCode).toBe(0);
    expect(await saveOf(other, 'ipv4', 'nft')).toMatch(/--dport 3306 -j RETURN/);
    const none = await pool.make('mcbypnone');
    expect((await run('ADD', none, { namespace: 'apps' })).exitCode).toBe(0);
    expect(await saveOf(none, 'ipv4', 'nft')).toContain('-A ISTIO_OUTPUT');
  });

  it('"deny": ["*"] refuses every annotation that narrows capture, with any value — an empty includeInboundPorts too', async () => {
    const pod = await pool.make('mcbypall');
    const before = await snapshot(pod);
    const add = await run('ADD', pod, { namespace: 'apps', annotations: { [Annotation.includeInboundPorts]: '' }, policy: { deny: ['*'] } });
    expect(msgOf(add).msg).toBe(`bypass_policy denies annotation ${Annotation.includeInboundPorts}="" in namespace "apps" (no namespace is allowed)`);
    expect(await snapshot(pod)).toBe(before);
    const widening = await pool.make('mcbypall');
    expect((await run('ADD', widening, { namespace: 'apps', annotations: { [Annotation.includeOutboundPorts]: '8080' }, policy: { deny: ['*'] } })).exitCode).toBe(0);
  });

  it('judges no pod that is not enrolled', async () => {
    const pod = await pool.make('mcbypskip');
    const before = await snapshot(pod);
    const annotations = { [Annotation.excludeOutboundIPRanges]: '203.0.113.0/24', [Annotation.inject]: 'false' };
    expect((await run('ADD', pod, { namespace: 'apps', annotations })).exitCode).toBe(0);
    expect(await snapshot(pod)).toBe(before);
  });
});

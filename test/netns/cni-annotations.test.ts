import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { saveOf } from '../helpers/meshcap.js';
import { netnsPool, requireRoot, saveTables, splitDryRunFamilies, type Netns } from '../helpers/netns.js';
import { entryCommand } from '../helpers/paths.js';
import { Annotation } from '../../src/config/annotations.js';
import { ANNOTATION_CASES, istioArgv, judgeCase, type AnnotationCase, type DoorOutcome } from '../conformance/istio-cni-annotations/cases.js';

requireRoot();

/**
 * istio-cni's annotation grammar, case by case (test/conformance/istio-cni-annotations): meshcap-cni ADD in a
 * real namespace, then the namespace's iptables-save against `meshcap -n` with the flags istio-cni derives for
 * the same pod. A case Istio refuses must be refused, naming the annotation and its value as the pod carries
 * it, with the namespace untouched.
 */
const cni = entryCommand('meshcap-cni');
const meshcap = entryCommand();
const STATUS = { [Annotation.status]: JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };

function add(pod: Netns, annotations: Readonly<Record<string, string>>, mode: 'sidecar' | 'ambient') {
  const conf = {
    cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', ipv6: 'off', force_iptables_binary: 'nft', mode,
    capabilities: { 'io.kubernetes.cri.pod-annotations': true },
    // An ambient pod is enrolled without a status annotation (one would mean a sidecar).
    runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { ...(mode === 'sidecar' ? STATUS : {}), ...annotations } },
    prevResult: { cniVersion: '1.0.0', ips: [{ address: '198.51.100.2/24' }] },
  };
  const env = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'annot0', CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni', CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web' };
  return execa(cni.file, cni.args, { reject: false, input: JSON.stringify(conf), env });
}

async function istioRules(flags: Readonly<Record<string, string>>, mode?: 'ambient'): Promise<Map<string, string> | undefined> {
  const dry = await execa(meshcap.file, [...meshcap.args, ...istioArgv(flags, mode), '-n', '--ipv6', 'off'], { reject: false });
  return dry.exitCode === 0 ? saveTables(splitDryRunFamilies(dry.stdout).ipv4) : undefined;
}

/** Runs one case through the door and compares with Istio's flags; `flags` overrides the case's (to show a wrong one is caught). */
async function runCase(pod: Netns, c: AnnotationCase, flags = 'flags' in c.istio ? c.istio.flags : undefined): Promise<{ outcome: DoorOutcome; untouched: boolean }> {
  const before = await saveOf(pod, 'ipv4', 'nft');
  const r = await add(pod, c.annotations, c.mode ?? 'sidecar');
  const after = await saveOf(pod, 'ipv4', 'nft');
  if (r.exitCode !== 0) return { outcome: { accepted: false, message: String((JSON.parse(r.stdout) as { msg?: unknown }).msg) }, untouched: before === after };
  const expected = flags === undefined ? undefined : await istioRules(flags, c.mode);
  const same = expected !== undefined && JSON.stringify([...saveTables(after)]) === JSON.stringify([...expected]);
  return { outcome: { accepted: true, sameRules: same }, untouched: before === after };
}

describe('istio-cni annotation cases through meshcap-cni ADD', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);

  it.each(ANNOTATION_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const pod = await pool.make('mcannot');
    const { outcome, untouched } = await runCase(pod, c);
    expect(judgeCase(c, outcome)).toEqual([]);
    if (!outcome.accepted) expect(untouched).toBe(true);
  });

  it('catches a deliberately wrong expectation: "eth1, eth2" compared with Istio flags that exclude only eth1', async () => {
    const pod = await pool.make('mcannotw');
    const c = ANNOTATION_CASES.find((x) => x.name === 'excludeInterfaces: a natural list "eth1, eth2"');
    if (c === undefined) throw new Error('case missing');
    const right = await runCase(pod, c);
    expect(judgeCase(c, right.outcome)).toEqual([]);
    const pod2 = await pool.make('mcannotw');
    const wrong = await runCase(pod2, c, { '-c': 'eth1' });
    expect(judgeCase(c, wrong.outcome)).toEqual(['ADD succeeded but the rules differ from what istio-cni derives']);
  });
});

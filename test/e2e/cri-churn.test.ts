import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateContainerd } from '../helpers/cri/containerd.js';
import { requireRoot } from '../helpers/netns.js';
import { entryCommand, IMPL } from '../helpers/paths.js';

requireRoot();

/**
 * Pod churn through containerd's CRI, as a busy node sees it: PODS pods, CONCURRENCY at a time, every
 * third one injected (meshcap-cni applies rules) and the rest not, each created (RunPodSandbox) and removed
 * (StopPodSandbox + RemovePodSandbox). Every create must succeed, and afterwards nothing may be left.
 */

const PODS = 100;
const CONCURRENCY = 8;
const INJECTED = { 'sidecar.istio.io/status': JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };
const hostIstio = async () => ((await execa('iptables-save', [], { reject: false })).stdout.match(/ISTIO_/g) ?? []).length;

describe(`pod churn through CRI with meshcap-cni (${IMPL})`, () => {
  let lab: PrivateContainerd | undefined;
  const L = () => lab as PrivateContainerd;
  let hostBefore = 0;

  beforeAll(async () => {
    hostBefore = await hostIstio();
    lab = new PrivateContainerd('198.51.100.0/24');
    L().installPlugin(entryCommand('meshcap-cni'));
    L().writeConflist([{ type: 'meshcap-cni', mode: 'sidecar', ipv6: 'off', capabilities: { 'io.kubernetes.cri.pod-annotations': true }, log_file: L().pluginLog }]);
    await L().start();
  }, 90_000);

  afterAll(async () => {
    await lab?.destroy();
    expect(await lab?.residue()).toEqual([]);
  }, 90_000);

  it(`creates and removes ${PODS} pods, ${CONCURRENCY} at a time, mixed enrolled and not: every create succeeds and nothing is left`, { timeout: 600_000 }, async () => {
    const failures: string[] = [];
    let next = 0;
    let enrolled = 0;
    const started = performance.now();
    const worker = async () => {
      for (let i = next++; i < PODS; i = next++) {
        const inMesh = i % 3 === 0;
        if (inMesh) enrolled++;
        try {
          const id = await L().runPod(`churn-${i}`, 'default', inMesh ? { ...INJECTED, 'traffic.sidecar.istio.io/excludeOutboundPorts': String(9000 + i) } : { 'example.com/index': String(i) });
          await L().removePod(id);
        } catch (err) {
          failures.push(`pod ${i}: ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - started) / 1000;
    const left = await L().leftovers();
    const log = readFileSync(L().pluginLog, 'utf8');
    const applied = (log.match(/"msg":"applied"/g) ?? []).length;
    // A DEL that found our rules in the pod's namespace and took them out (the rules leftovers: none survive a stop).
    const removed = (log.match(/"ipv4":"removed"/g) ?? []).length;
    const hostRules = (await hostIstio()) - hostBefore;
    const total = left.netnsMounts + left.veths + left.leases + left.lockFiles + left.sandboxes + hostRules;
    console.log(
      `[cri-churn ${IMPL}] pods=${PODS} concurrency=${CONCURRENCY} enrolled=${enrolled} seconds=${seconds.toFixed(1)} pods/s=${(PODS / seconds).toFixed(2)} ` +
        `failures=${failures.length} applied=${applied} rules-removed-by-DEL=${removed} leftovers=${total} ${JSON.stringify({ ...left, hostRules })}`,
    );
    expect(failures).toEqual([]);
    expect(applied).toBe(enrolled);
    expect(removed).toBe(enrolled);
    expect(log).not.toContain('"level":50');
    expect({ ...left, hostRules }).toEqual({ netnsMounts: 0, veths: 0, leases: 0, lockFiles: 0, sandboxes: 0, hostRules: 0 });
  });
});

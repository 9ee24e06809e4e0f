import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { ADDR, ROOT, PodTopology } from '../helpers/topology.js';
import { traceInProcess } from './trace-harness.js';

requireRoot();

/**
 * Set matches, live: `meshcap ambient-host` in the peer ("node") namespace SNATs the node's own connections to
 * pods in the probe ipset. Trace reads the set's members with `ipset save`; the kernel's answer is the source
 * address the pod's app sees (the SNAT address for a member, the node's own address otherwise).
 */
const PROBE_V4 = '169.254.7.127';
const PROBE_V6 = '2001:db8:7127::1';

describe('trace of a set match against the kernel', () => {
  let topo: PodTopology | undefined;
  const t = () => topo as PodTopology;
  beforeAll(async () => {
    topo = await PodTopology.create();
    await t().serve(t().pod, ROOT, 'app', [8080]);
    const r = await t().meshcap(['ambient-host', '--ipv6', 'on', '--host-probe-snat-v6', PROBE_V6, '--add-pod-ip', ADDR.podV4], t().peer);
    expect(r.exitCode, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await topo?.destroy();
  });

  const snatRule = (path: readonly { rule: string }[]) => path.some((s) => s.rule.includes('-j SNAT'));

  it('predicts the SNAT for a pod in the set and its absence for a pod that is not', async () => {
    const member = await traceInProcess(['trace', '--netns', t().peer.path, '--dst', ADDR.podV4, '--dport', '8080', '--json']);
    const other = await traceInProcess(['trace', '--netns', t().peer.path, '--dst', ADDR.podV6, '--dport', '8080', '--json']);
    expect(member.verdict).toBe('pass');
    expect(snatRule(member.path)).toBe(true);
    expect(snatRule(other.path)).toBe(false);
    expect(await t().connect(t().peer, ROOT, ADDR.podV4, 8080)).toBe(`app 8080 ${ADDR.podV4} 8080 ${PROBE_V4}`);
    expect(await t().connect(t().peer, ROOT, ADDR.podV6, 8080)).toBe(`app 8080 ${ADDR.podV6} 8080 ${ADDR.peerV6}`);
  });

  it('reports unknown, naming the rule, when the set cannot be read (a dump)', async () => {
    const { stdout } = await t().peer.run('iptables-nft-save', []);
    const dir = mkdtempSync(join(tmpdir(), 'meshcap-sets-'));
    try {
      writeFileSync(join(dir, 'node.save'), stdout);
      const r = await traceInProcess(['trace', '--rules', join(dir, 'node.save'), '--dst', ADDR.podV4, '--dport', '8080', '--json']);
      expect(r.verdict).toBe('unknown');
      expect(JSON.stringify(r)).toContain('--match-set istio-inpod-probes-v4 dst');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

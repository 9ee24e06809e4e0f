import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { APP, TPROXY_ARGS, useNativePod } from '../helpers/native-pod.js';
import { Holders, precheck, settleIpv6, snapshotNamespace } from '../helpers/precheck.js';
import { PodTopology } from '../helpers/topology.js';

/**
 * precheck on native nftables rules, continued (see precheck-nft.test.ts): sidecar TPROXY (its mark and policy
 * routing, the walk through the mangle tproxy rules) and ambient (known by ztunnel's mark in the native tables).
 * Every precheck run proves it changed nothing in the namespace.
 */
describe('precheck of a sidecar pod on native nftables (TPROXY)', () => {
  // TPROXY runs the proxy as root with gid 1337: its sockets belong to uid 0, its comm says it is the proxy.
  const pod = useNativePod(TPROXY_ARGS, { uid: 0, gid: 1337 });
  const ns = () => pod.topology().pod;

  it('finds only MCP031 (info) in a clean pod: Istio\'s native TPROXY rules exempt 15008 only in nat', async () => {
    const run = await precheck(ns());
    expect(run).toMatchObject({ exitCode: 0, codes: ['MCP031'] });
    expect(run.findings.map((f) => f.severity)).toEqual(['info']);
  });

  it('MCP030: reports the native TPROXY mark without its ip rule, until the rule is back', async () => {
    await ns().run('ip', ['-4', 'rule', 'del', 'fwmark', '1337', 'lookup', '133']);
    try {
      const run = await precheck(ns());
      expect(run).toMatchObject({ exitCode: 1, codes: ['MCP030', 'MCP031'] });
      expect(run.findings.find((f) => f.code === 'MCP030')?.message).toBe('TPROXY rules present but policy routing for mark 0x539/0xffffffff is missing; intercepted inbound packets are not delivered locally');
    } finally {
      await ns().run('ip', ['-4', 'rule', 'add', 'fwmark', '1337', 'lookup', '133']);
    }
    expect((await precheck(ns())).codes).toEqual(['MCP031']);
  });

  it('MCP030: reports the IPv6 routing table without its local route, until it is back', async () => {
    await ns().run('ip', ['-6', 'route', 'del', 'local', 'default', 'dev', 'lo', 'table', '133']);
    try {
      expect((await precheck(ns())).codes).toEqual(['MCP030', 'MCP031']);
    } finally {
      await ns().run('ip', ['-6', 'route', 'add', 'local', 'default', 'dev', 'lo', 'table', '133']);
    }
    expect((await precheck(ns())).codes).toEqual(['MCP031']);
  });

  it('MCP010 and MCP013: the walk goes through the native mangle tproxy rules', async () => {
    await pod.apply(['-d', '15090,15021,15020,9090']);
    const lo = await pod.extras.start(ns(), APP, ['tcp:127.0.0.1:9000']);
    const excluded = await pod.extras.start(ns(), APP, ['tcp:0.0.0.0:9090']);
    try {
      const run = await precheck(ns());
      expect(run.findings.map((f) => `${f.code} ${f.port ?? ''}`.trim()).sort()).toEqual(['MCP010 9000', 'MCP013 9090', 'MCP031']);
    } finally {
      await lo.stop();
      await excluded.stop();
      await pod.apply();
    }
    expect((await precheck(ns())).codes).toEqual(['MCP031']);
  });

  it('MCP020: the native TPROXY rules exempt uid 1337 too', async () => {
    const worker = await pod.extras.start(ns(), { uid: 1337, gid: 1000, comm: 'worker' });
    expect((await precheck(ns())).codes).toEqual(['MCP020', 'MCP031']);
    await worker.stop();
    expect((await precheck(ns())).codes).toEqual(['MCP031']);
  });
});

describe('precheck of an ambient pod on native nftables', () => {
  const holders = new Holders();
  let t: PodTopology | undefined;
  beforeAll(async () => {
    requireRoot();
    t = await PodTopology.create();
    await settleIpv6(t.pod);
  });
  afterAll(async () => {
    await holders.stopAll();
    await t?.destroy();
  });

  it('MCP040 and MCP010: native ambient redirection without ztunnel, then an app port bound to localhost', async () => {
    if (t === undefined) throw new Error('no pod topology');
    const ambient = (more: readonly string[]) => t?.meshcap(['ambient', '--native-nftables', ...more]);
    expect((await ambient([]))?.exitCode).toBe(0);
    try {
      expect(await snapshotNamespace(t.pod)).toContain('table inet istio-ambient-nat');
      expect(await precheck(t.pod)).toMatchObject({ exitCode: 1, codes: ['MCP040'] });
      await holders.start(t.pod, { uid: 0, gid: 0, comm: 'ztunnel' }, ['tcp:0.0.0.0:15001', 'tcp:0.0.0.0:15006', 'tcp:0.0.0.0:15008', 'tcp:127.0.0.1:15080']);
      await holders.start(t.pod, APP, ['tcp:0.0.0.0:8080']);
      expect((await precheck(t.pod)).codes).toEqual([]);
      // ztunnel's native redirect captures every app port: one bound to localhost only is unreachable.
      const lo = await holders.start(t.pod, APP, ['tcp:127.0.0.1:9000']);
      expect((await precheck(t.pod)).findings.map((f) => `${f.code} ${f.port ?? ''}`)).toEqual(['MCP010 9000']);
      await lo.stop();
      expect((await precheck(t.pod)).codes).toEqual([]);
    } finally {
      await holders.stopAll();
      await ambient(['--cleanup-only']);
    }
    expect(await snapshotNamespace(t.pod)).not.toContain('istio-ambient');
  });
});

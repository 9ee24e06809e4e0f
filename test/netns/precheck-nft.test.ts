import { describe, expect, it } from 'vitest';
import { APP, useNativePod } from '../helpers/native-pod.js';
import { precheck, snapshotNamespace } from '../helpers/precheck.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';

/**
 * precheck against real namespaces holding meshcap's native nftables rules (`--native-nftables`, no iptables
 * rule at all): a real proxy and app (uid, gid and comm set, real sockets), each rule question provoked on
 * purpose and removed again. Every finding asked for here needs the native rules read as rules — their inbound
 * walk, their redirect ports, their owner exemptions — not only their table names (TPROXY and ambient:
 * precheck-nft-tproxy-ambient.test.ts). Every precheck run also proves it changed nothing: `nft list ruleset`,
 * ip rules, routes and addresses are byte-identical before and after.
 */
describe('precheck of a sidecar pod on native nftables (REDIRECT)', () => {
  const pod = useNativePod(ISTIO_INIT_ARGS, { uid: 1337, gid: 1337 });
  const ns = () => pod.topology().pod;

  it('finds nothing in a clean pod: native rules, proxy, agent and app in place', async () => {
    expect(await snapshotNamespace(ns())).toContain('table inet istio-proxy-nat');
    expect(await snapshotNamespace(ns())).not.toContain('ISTIO_');
    expect(await precheck(ns())).toMatchObject({ exitCode: 0, codes: [] });
  });

  const nft = (line: string) => ns().run('nft', line.split(' '));

  it('MCP001: reports native tables whose base chains no longer jump into the capture chains, until re-applied', async () => {
    try {
      await nft('flush chain inet istio-proxy-nat prerouting');
      await nft('flush chain inet istio-proxy-nat output');
      expect(await precheck(ns())).toMatchObject({ exitCode: 1, codes: ['MCP001'] });
    } finally {
      await pod.apply();
    }
    expect((await precheck(ns())).codes).toEqual([]);
  });

  it('MCP004: reports the IPv6 address when the native entry rules match IPv4 only, until re-applied', async () => {
    try {
      await nft('flush chain inet istio-proxy-nat prerouting');
      await nft('flush chain inet istio-proxy-nat output');
      await nft('add rule inet istio-proxy-nat prerouting meta nfproto ipv4 meta l4proto tcp jump istio-inbound');
      await nft('add rule inet istio-proxy-nat output meta nfproto ipv4 jump istio-output');
      const run = await precheck(ns());
      expect(run.codes).toEqual(['MCP004']);
      expect(run.findings[0]?.message).toBe('pod has IPv6 address 2001:db8:1::2 but no IPv6 capture rules; IPv6 traffic bypasses the proxy');
    } finally {
      await pod.apply();
    }
    expect((await precheck(ns())).codes).toEqual([]);
  });

  it('MCP010: reports an app port bound only to localhost, found by the walk of the native inbound rules', async () => {
    const lo = await pod.extras.start(ns(), APP, ['tcp:127.0.0.1:9000']);
    const both = await pod.extras.start(ns(), APP, ['tcp:[::1]:9001', 'tcp:0.0.0.0:9001']);
    const run = await precheck(ns());
    expect(run).toMatchObject({ exitCode: 1, codes: ['MCP010'] });
    expect(run.findings.map((f) => f.port)).toEqual([9000]);
    expect(run.findings[0]?.message).toBe('port 9000 listens only on 127.0.0.1; it is unreachable from other pods (sidecar ≥1.10)');
    await lo.stop();
    await both.stop();
    expect((await precheck(ns())).codes).toEqual([]);
  });

  it("MCP011: reports an app holding one of the sidecar's reserved ports, until it lets go", async () => {
    const squatter = await pod.extras.start(ns(), APP, ['tcp:0.0.0.0:15004']);
    const run = await precheck(ns());
    expect(run.codes).toEqual(['MCP011']);
    expect(run.findings[0]?.message).toBe('port 15004 is reserved by the sidecar (debug) but is held by uid 1000');
    await squatter.stop();
    expect((await precheck(ns())).codes).toEqual([]);
  });

  it("MCP012: reports the native rules' redirect ports nobody listens on while the proxy is down", async () => {
    await pod.stopProxy();
    try {
      const run = await precheck(ns());
      expect(run.findings.filter((f) => f.code === 'MCP012').map((f) => f.port)).toEqual([15001, 15006]);
      expect(run.findings.find((f) => f.code === 'MCP012')?.message).toBe('capture redirects to :15001 but no socket listens there; redirected connections are refused');
    } finally {
      await pod.startProxy();
    }
    expect((await precheck(ns())).codes).toEqual([]);
  });

  it('MCP013: reports a listening port that the native rules exclude from inbound capture', async () => {
    await pod.apply(['-d', '15090,15021,15020,9090']);
    // The listener stays: only the rules decide whether it is excluded.
    await pod.extras.start(ns(), APP, ['tcp:0.0.0.0:9090', 'tcp:[::]:9090']);
    try {
      const run = await precheck(ns());
      expect(run).toMatchObject({ exitCode: 0, codes: ['MCP013'] });
      expect(run.findings.map((f) => f.port)).toEqual([9090]);
      expect(run.findings[0]?.message).toBe('port 9090 is excluded from inbound capture; connections to it bypass the proxy (no mTLS/policy)');
    } finally {
      await pod.apply();
    }
    expect((await precheck(ns())).codes).toEqual([]);
  });

  it.each([
    ['MCP020', { uid: 1337, gid: 1000 }, 'runs as uid 1337, which the capture rules exempt'],
    ['MCP021', { uid: 1000, gid: 1337 }, 'runs with gid 1337, which the capture rules exempt'],
  ])('%s: reports a non-proxy process with an id that `meta skuid/skgid` exempts, until it exits', async (code, ids, text) => {
    const worker = await pod.extras.start(ns(), { ...ids, comm: 'worker' });
    const run = await precheck(ns());
    expect(run.codes).toEqual([code]);
    expect(run.findings[0]).toMatchObject({ pid: worker.pid, message: expect.stringContaining(`process worker(pid ${worker.pid}) ${text}`) });
    await worker.stop();
    expect((await precheck(ns())).codes).toEqual([]);
  });

  it('MCP020: follows the native rules: a second exempt uid counts once the rules name it', async () => {
    await pod.extras.start(ns(), { uid: 1338, gid: 1000, comm: 'worker' });
    expect((await precheck(ns())).codes).toEqual([]);
    try {
      await pod.apply(['-u', '1337,1338']);
      expect((await precheck(ns())).codes).toEqual(['MCP020']);
    } finally {
      await pod.apply();
    }
  });

  it('MCP002: reports iptables-nft capture rules next to the native tables, until they are cleaned up', async () => {
    const iptables = async (more: readonly string[]) => {
      const r = await pod.topology().meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on', '--force-iptables-binary', 'nft', ...more]);
      expect(r.exitCode, r.stderr).toBe(0);
    };
    try {
      await iptables([]);
      const run = await precheck(ns());
      expect(run.codes).toEqual(['MCP002']);
      expect(run.findings[0]?.message).toContain('capture rules present in both iptables-nft and native nftables (inet istio-proxy-nat');
    } finally {
      await iptables(['--cleanup-only']);
    }
    expect((await precheck(ns())).codes).toEqual([]);
  });

  it('MCP013 with both: a port one of them excludes is still captured by the other; excluded by both, it is reported', async () => {
    const exclude = ['-d', '15090,15021,15020,9090'];
    const iptables = async (more: readonly string[]) => {
      const r = await pod.topology().meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on', '--force-iptables-binary', 'nft', ...exclude, ...more]);
      expect(r.exitCode, r.stderr).toBe(0);
    };
    await pod.extras.start(ns(), APP, ['tcp:0.0.0.0:9090']);
    try {
      await iptables([]);
      // iptables' nat PREROUTING returns for 9090 without a nat binding, so the native nat chain redirects it.
      expect((await precheck(ns())).codes).toEqual(['MCP002']);
      await pod.apply(exclude);
      const run = await precheck(ns());
      expect(run.codes).toEqual(['MCP002', 'MCP013']);
      expect(run.findings.find((f) => f.code === 'MCP013')?.port).toBe(9090);
    } finally {
      await iptables(['--cleanup-only']);
      await pod.apply();
    }
    expect((await precheck(ns())).codes).toEqual([]);
  });
});

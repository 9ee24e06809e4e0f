import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { entryCommand } from '../helpers/paths.js';
import { Holders, precheck, settleIpv6, snapshotNamespace } from '../helpers/precheck.js';
import { PodTopology } from '../helpers/topology.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';

/**
 * precheck against real namespaces: meshcap's own rules applied on each iptables backend, a real proxy and app
 * (processes with their uid, gid and comm, holding real sockets), each finding provoked on purpose and removed
 * again. Every precheck run also proves it changed nothing: the namespace is byte-identical before and after.
 */
const ENVOY = { uid: 1337, gid: 1337, comm: 'envoy' };
const ENVOY_SOCKETS = ['tcp:0.0.0.0:15001', 'tcp:[::]:15001', 'tcp:0.0.0.0:15006', 'tcp:[::]:15006', 'tcp:127.0.0.1:15000', 'tcp:0.0.0.0:15021', 'tcp:0.0.0.0:15090'];
const APP = { uid: 1000, gid: 1000, comm: 'app' };

describe.each(['legacy', 'nft'] as const)('precheck of a sidecar pod on iptables-%s', (backend) => {
  const other = backend === 'legacy' ? 'nft' : 'legacy';
  /** The pod's proxy, agent and app; `extras` are the processes a test adds. */
  const holders = new Holders();
  const extras = new Holders();
  let t: PodTopology;
  const apply = async (args: readonly string[], b: string = backend) => {
    const r = await t.meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on', '--force-iptables-binary', b, ...args]);
    expect(r.exitCode, r.stderr).toBe(0);
  };
  const ipt = (family: 4 | 6, args: readonly string[]) => t.pod.run(`${family === 4 ? 'iptables' : 'ip6tables'}-${backend}`, args);

  beforeAll(async () => {
    requireRoot();
    t = await PodTopology.create();
    await settleIpv6(t.pod);
    await apply([]);
    await holders.start(t.pod, ENVOY, ENVOY_SOCKETS);
    await holders.start(t.pod, { uid: 1337, gid: 1337, comm: 'pilot-agent' }, ['tcp:0.0.0.0:15020']);
    await holders.start(t.pod, APP, ['tcp:0.0.0.0:8080', 'tcp:[::]:8080']);
  });
  afterEach(() => extras.stopAll());
  afterAll(async () => {
    await extras.stopAll();
    await holders.stopAll();
    await t?.destroy();
  });

  it('finds nothing in a clean pod: rules, proxy, agent and app in place', async () => {
    expect(await precheck(t.pod)).toMatchObject({ exitCode: 0, codes: [] });
  });

  it('finds nothing when run from inside the namespace, as from a debug container', async () => {
    const { file, args } = entryCommand();
    const r = await execa('ip', ['netns', 'exec', t.pod.name, file, ...args, 'precheck', '--json'], { reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ findings: [] });
  });

  it('MCP002: reports rules in both iptables backends, until the second set is cleaned up', async () => {
    await apply([], other);
    expect((await precheck(t.pod)).codes).toEqual(['MCP002']);
    await apply(['--cleanup-only'], other);
    expect((await precheck(t.pod)).codes).toEqual([]);
  });

  it('MCP002: reports iptables rules next to a native nftables mesh table, until the table is gone', async () => {
    await t.pod.run('nft', ['add', 'table', 'inet', 'istio-proxy-nat']);
    const run = await precheck(t.pod);
    expect(run.codes).toEqual(['MCP002']);
    expect(run.findings[0]?.message).toBe(`capture rules present in both iptables-${backend} and native nftables (inet istio-proxy-nat); evaluation order between backends decides which applies`);
    await t.pod.run('nft', ['delete', 'table', 'inet', 'istio-proxy-nat']);
    expect((await precheck(t.pod)).codes).toEqual([]);
  });

  it('MCP003: reports a foreign RETURN ahead of the capture jump, until it is deleted', async () => {
    const rule = ['-t', 'nat', '-I', 'OUTPUT', '1', '-p', 'tcp', '--dport', '5432', '-j', 'RETURN'];
    await ipt(4, rule);
    const run = await precheck(t.pod);
    expect(run.codes).toEqual(['MCP003']);
    expect(run.findings[0]?.message).toContain(`iptables-${backend} -t nat -A OUTPUT -p tcp -m tcp --dport 5432 -j RETURN`);
    await ipt(4, ['-t', 'nat', '-D', 'OUTPUT', '1']);
    expect((await precheck(t.pod)).codes).toEqual([]);
  });

  it('MCP004: reports an IPv6 address without IPv6 capture, until the IPv6 rules are back', async () => {
    const saved = (await t.pod.run(`ip6tables-${backend}-save`, ['-t', 'nat'])).stdout;
    await ipt(6, ['-t', 'nat', '-F', 'OUTPUT']);
    await ipt(6, ['-t', 'nat', '-F', 'PREROUTING']);
    const run = await precheck(t.pod);
    expect(run.codes).toEqual(['MCP004']);
    expect(run.findings[0]?.message).toContain('2001:db8:1::2');
    await t.pod.run(`ip6tables-${backend}-restore`, [], { input: saved });
    expect((await precheck(t.pod)).codes).toEqual([]);
  });

  it('MCP010: reports an app port bound only to localhost, and not one also bound to the wildcard', async () => {
    const lo = await extras.start(t.pod, APP, ['tcp:127.0.0.1:9000']);
    const both = await extras.start(t.pod, APP, ['tcp:[::1]:9001', 'tcp:0.0.0.0:9001']);
    const run = await precheck(t.pod);
    expect(run.codes).toEqual(['MCP010']);
    expect(run.findings.map((f) => f.port)).toEqual([9000]);
    expect((await precheck(t.pod, ['--port', '8080,9001'])).codes).toEqual([]);
    await lo.stop();
    await both.stop();
    expect((await precheck(t.pod)).codes).toEqual([]);
  });

  it("MCP011: reports an app holding one of the sidecar's reserved ports, until it lets go", async () => {
    const squatter = await extras.start(t.pod, APP, ['tcp:0.0.0.0:15004']);
    const run = await precheck(t.pod);
    expect(run.codes).toEqual(['MCP011']);
    expect(run.findings[0]?.message).toBe('port 15004 is reserved by the sidecar (debug) but is held by uid 1000');
    await squatter.stop();
    expect((await precheck(t.pod)).codes).toEqual([]);
  });

  it('MCP012: reports capture ports nobody listens on while the proxy is down', async () => {
    await holders.stopAll();
    const run = await precheck(t.pod);
    expect(run.findings.filter((f) => f.code === 'MCP012').map((f) => f.port)).toEqual([15001, 15006]);
    await holders.start(t.pod, ENVOY, ENVOY_SOCKETS);
    await holders.start(t.pod, { uid: 1337, gid: 1337, comm: 'pilot-agent' }, ['tcp:0.0.0.0:15020']);
    await holders.start(t.pod, APP, ['tcp:0.0.0.0:8080', 'tcp:[::]:8080']);
    expect((await precheck(t.pod)).codes).toEqual([]);
  });

  it('MCP013: reports a listening port that the rules exclude from inbound capture', async () => {
    await apply(['-d', '15090,15021,15020,9090', '--reconcile']);
    const excluded = await extras.start(t.pod, APP, ['tcp:0.0.0.0:9090']);
    const run = await precheck(t.pod);
    expect(run).toMatchObject({ exitCode: 0, codes: ['MCP013'] });
    expect(run.findings[0]?.port).toBe(9090);
    await excluded.stop();
    expect((await precheck(t.pod)).codes).toEqual([]);
    await apply(['--reconcile']);
  });

  it.each([
    ['MCP020', { uid: 1337, gid: 1000 }, 'runs as uid 1337'],
    ['MCP021', { uid: 1000, gid: 1337 }, 'runs with gid 1337'],
  ])('%s: reports a non-proxy process with an exempt id, until it exits', async (code, ids, text) => {
    const worker = await extras.start(t.pod, { ...ids, comm: 'worker' });
    const run = await precheck(t.pod);
    expect(run.codes).toEqual([code]);
    expect(run.findings[0]).toMatchObject({ pid: worker.pid, message: expect.stringContaining(`process worker(pid ${worker.pid}) ${text}`) });
    await worker.stop();
    expect((await precheck(t.pod)).codes).toEqual([]);
  });
});

describe.each(['legacy', 'nft'] as const)('precheck of special layouts on iptables-%s', (backend) => {
  const holders = new Holders();
  let t: PodTopology;
  beforeAll(async () => {
    requireRoot();
    t = await PodTopology.create();
    await settleIpv6(t.pod);
  });
  afterEach(() => holders.stopAll());
  afterAll(async () => {
    await holders.stopAll();
    await t?.destroy();
  });
  const meshcap = async (args: readonly string[]) => {
    const r = await t.meshcap([...args, '--force-iptables-binary', backend]);
    expect(r.exitCode, r.stderr).toBe(0);
  };

  it('MCP001: reports a namespace without capture rules, until rules are applied', async () => {
    expect(await precheck(t.pod)).toMatchObject({ exitCode: 1, codes: ['MCP001'] });
    try {
      await meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on']);
      expect((await precheck(t.pod)).codes).not.toContain('MCP001');
    } finally {
      await meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on', '--cleanup-only']);
    }
  });

  it('MCP030 and MCP031: TPROXY without its policy routing, and without a 15008 exemption', async () => {
    const tproxy = ISTIO_INIT_ARGS.map((a) => (a === 'REDIRECT' ? 'TPROXY' : a));
    await meshcap([...tproxy, '--ipv6', 'on']);
    try {
    // TPROXY runs the proxy as root with gid 1337: its sockets belong to uid 0, its comm says it is the proxy.
    await holders.start(t.pod, { uid: 0, gid: 1337, comm: 'envoy' }, ENVOY_SOCKETS);
    expect(await precheck(t.pod)).toMatchObject({ exitCode: 0, codes: ['MCP031'] });
    await t.pod.run('ip', ['-4', 'rule', 'del', 'fwmark', '1337', 'lookup', '133']);
    const run = await precheck(t.pod);
    expect(run.codes).toEqual(['MCP030', 'MCP031']);
    expect(run.findings.find((f) => f.code === 'MCP030')?.message).toContain('mark 0x539/0xffffffff');
    await t.pod.run('ip', ['-4', 'rule', 'add', 'fwmark', '1337', 'lookup', '133']);
    for (const family of ['iptables', 'ip6tables']) await t.pod.run(`${family}-${backend}`, ['-t', 'mangle', '-I', 'ISTIO_INBOUND', '1', '-p', 'tcp', '--dport', '15008', '-j', 'RETURN']);
    expect((await precheck(t.pod)).codes).toEqual([]);
    for (const family of ['iptables', 'ip6tables']) await t.pod.run(`${family}-${backend}`, ['-t', 'mangle', '-D', 'ISTIO_INBOUND', '1']);
    } finally {
      await meshcap([...tproxy, '--ipv6', 'on', '--cleanup-only', '--reconcile']);
    }
  });

  it('MCP040: reports ambient redirection without ztunnel listening, until ztunnel is there', async () => {
    await meshcap(['ambient']);
    try {
      expect(await precheck(t.pod)).toMatchObject({ exitCode: 1, codes: ['MCP040'] });
      await holders.start(t.pod, { uid: 0, gid: 0, comm: 'ztunnel' }, ['tcp:0.0.0.0:15001', 'tcp:0.0.0.0:15006', 'tcp:0.0.0.0:15008', 'tcp:127.0.0.1:15080']);
      expect((await precheck(t.pod)).codes).toEqual([]);
    } finally {
      await meshcap(['ambient', '--cleanup-only']);
    }
    expect(await snapshotNamespace(t.pod)).not.toContain('ISTIO_');
  });
});

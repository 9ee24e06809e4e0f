import { execa } from 'execa';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepNode } from '../../src/agent/sweep.js';
import { CriRuntime } from '../../src/cri/runtime.js';
import { createSpawnRunner } from '../../src/exec/spawn-runner.js';
import { createLogger } from '../../src/log.js';
import { netConfSchema } from '../../src/node/plugin-config.js';
import { nodeHost } from '../../src/config/host.js';
import { agentArgs, meshcap, metricValue, sleep, startAgent, waitFor, type Agent } from '../helpers/cri/agent.js';
import { PrivateContainerd } from '../helpers/cri/containerd.js';
import { connectFrom, iptablesSaveIn, listenIn, nsExec, type Listener } from '../helpers/cri/traffic.js';
import { requireRoot } from '../helpers/netns.js';
import { IMPL } from '../helpers/paths.js';

requireRoot();

/**
 * `meshcap node-agent` on a node (a private containerd 1.6 driven through its CRI as kubelet drives it):
 * pods that started before meshcap-cni was in the chain are captured by the agent's sweep, lost rules come
 * back, captured pods are only read, and the agent fails closed. One containerd for the whole file; every
 * agent runs with --sweep-interval 2. Runs the Node build, or with MESHCAP_IMPL=bin the executable.
 */

const status = (initContainers: string[] | null, containers: string[] | null) => JSON.stringify({ initContainers, containers, volumes: ['istio-envoy'], imagePullSecrets: null, revision: 'default' });
const INJECTED = { 'sidecar.istio.io/status': status(['istio-validation'], ['istio-proxy']) };
const REDIRECT = '-A ISTIO_OUTPUT -j ISTIO_REDIRECT';
const hostHasIstio = async () => (await execa('iptables-save', [], { reject: false })).stdout.includes('ISTIO_');
const rulesOf = async (netns: string) => (await iptablesSaveIn(netns)).split('\n').filter((l) => !l.startsWith('#')).join('\n');

interface Pod {
  readonly id: string;
  readonly netns: string;
  readonly ip: string;
}

type PodStatus = { namespace: string; name: string; id: string; state: string; reason: string };

describe(`meshcap node-agent (${IMPL}) on a node whose pods started before meshcap-cni was in the chain`, () => {
  let lab: PrivateContainerd | undefined;
  const L = () => lab as PrivateContainerd;
  let agent: Agent | undefined;
  const A = () => agent as Agent;
  const others: Agent[] = [];
  const pods = new Map<string, Pod>();
  const P = (name: string) => pods.get(name) as Pod;
  const before = new Map<string, string>();
  const listeners: Listener[] = [];
  let hostIstioBefore = false;
  const conf = () => ({ mode: 'sidecar', ipv6: 'off', exclude_namespaces: ['kube-system'], log_file: L().pluginLog });

  const run = async (name: string, namespace: string, annotations: Record<string, string>, hostNetwork = false) => {
    const id = await L().runPod(name, namespace, annotations, hostNetwork);
    const st = await L().cri.podSandboxStatus(id);
    pods.set(name, { id, netns: st.netns, ip: st.ip });
  };
  const nodeStatus = async (extra: string[] = ['--json']) => {
    const r = await execa(meshcap.file, [...meshcap.args, 'node-status', '--cri-socket', L().socket, '--cni-conf-dir', L().confDir, ...extra], { reject: false });
    return { code: r.exitCode, stdout: r.stdout, stderr: r.stderr, pods: extra.includes('--json') && r.stdout ? (JSON.parse(r.stdout) as { pods: PodStatus[] }).pods : [] };
  };
  const stateOf = (list: PodStatus[], name: string) => list.find((p) => p.name === name);
  const sweeps = (a: Agent) => a.logged('swept').length;
  const metrics = async (a: Agent) => (await a.get('/metrics')).body;
  const entryLast = () => (JSON.parse(readFileSync(join(L().confDir, `10-${L().network}.conflist`), 'utf8')) as { plugins: { type: string }[] }).plugins.map((p) => p.type);
  const pluginErrors = () => (existsSync(L().pluginLog) ? readFileSync(L().pluginLog, 'utf8').split('\n').filter((l) => l.includes('"level":50')) : []);

  beforeAll(async () => {
    hostIstioBefore = await hostHasIstio();
    lab = new PrivateContainerd('198.51.100.0/24');
    // The node's CNI config without meshcap-cni: the pods below start uncaptured.
    L().writeConflist([]);
    await L().start();
    await Promise.all([
      run('peer', 'default', {}),
      run('web', 'default', { ...INJECTED, 'traffic.sidecar.istio.io/excludeOutboundPorts': '9999' }),
      run('plain', 'default', {}),
      run('optout', 'default', { ...INJECTED, 'sidecar.istio.io/inject': 'false' }),
      run('system', 'kube-system', INJECTED),
      run('hostnet', 'default', INJECTED, true),
      run('bad', 'default', { ...INJECTED, 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '10.0.0.0/33' }),
    ]);
    listeners.push(await listenIn(P('peer').netns, 'peer', 9000), await listenIn(P('peer').netns, 'peer9999', 9999));
    for (const name of ['peer', 'plain', 'optout', 'system']) before.set(name, await rulesOf(P(name).netns));
  }, 120_000);

  afterAll(async () => {
    for (const a of [agent, ...others]) a?.kill();
    for (const l of listeners) await l.stop();
    await lab?.destroy();
    expect(await lab?.residue()).toEqual([]);
  }, 120_000);

  it('starts with every pod uncaptured (so a capture later is the agent\'s doing)', async () => {
    expect(P('hostnet').netns).toBe('');
    for (const name of ['web', 'bad', 'plain']) expect(await rulesOf(P(name).netns)).not.toContain('ISTIO_');
  });

  it('captures an injected pod that started before it within two sweeps: real TCP lands on 15001, excludeOutboundPorts is honoured; the entry goes last', async () => {
    agent = startAgent(L(), conf());
    await waitFor('the web pod captured', async () => (await rulesOf(P('web').netns)).includes(REDIRECT), 30_000);
    await waitFor('the repairing sweep logged', () => A().logged('swept').some((r) => Number(r['repairs']) > 0));
    const firstRepair = A().logged('swept').findIndex((r) => Number(r['repairs']) > 0);
    expect(firstRepair).toBeGreaterThanOrEqual(0);
    expect(firstRepair).toBeLessThan(2);
    expect(A().logged('repaired pod')).toContainEqual(expect.objectContaining({ namespace: 'default', name: 'web', found: 'bypassing' }));
    expect(entryLast()).toEqual(['bridge', 'meshcap-cni']);
    const proxy = await listenIn(P('web').netns, 'outbound', 15001, 1337);
    try {
      expect(await connectFrom(P('web').netns, P('peer').ip, 9000)).toMatch(/^outbound 15001 /);
      expect(await connectFrom(P('web').netns, P('peer').ip, 9999)).toMatch(/^peer9999 9999 /);
    } finally {
      await proxy.stop();
    }
  });

  it('leaves pods without annotations, with inject "false", in an excluded namespace and on the host network byte-identical; a bad annotation is an error naming it, and the sweep goes on', async () => {
    const n = sweeps(A());
    await waitFor('two more sweeps', () => sweeps(A()) >= n + 2);
    for (const name of ['peer', 'plain', 'optout', 'system']) expect(await rulesOf(P(name).netns)).toBe(before.get(name));
    expect(await hostHasIstio()).toBe(hostIstioBefore);
    expect(await rulesOf(P('bad').netns)).not.toContain('ISTIO_');
    const failed = A().logged('pod check failed').find((r) => r['name'] === 'bad');
    expect(failed?.['namespace']).toBe('default');
    expect(String(failed?.['reason'])).toContain('traffic.sidecar.istio.io/excludeOutboundIPRanges="10.0.0.0/33"');
  });

  it('serves /healthz, /readyz and metrics that follow the sweeps', async () => {
    expect((await A().get('/healthz')).status).toBe(200);
    expect(await A().get('/readyz')).toMatchObject({ status: 200 });
    const text = await metrics(A());
    expect(metricValue(text, 'meshcap_pods', 'state="captured"')).toBe(1);
    expect(metricValue(text, 'meshcap_pods', 'state="not_enrolled"')).toBe(5);
    expect(metricValue(text, 'meshcap_pods', 'state="error"')).toBe(1);
    expect(metricValue(text, 'meshcap_pods', 'state="bypassing"')).toBe(0);
    expect(metricValue(text, 'meshcap_repairs_total')).toBe(1);
    expect(metricValue(text, 'meshcap_pod_repairs_total', 'found="bypassing"')).toBe(1);
    expect(metricValue(text, 'meshcap_cni_installed')).toBe(1);
    expect(metricValue(text, 'meshcap_sweep_errors_total')).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'meshcap_sweep_duration_seconds_count')).toBeGreaterThanOrEqual(2);
  });

  it('reads a captured pod and never writes it: no repair is counted across sweeps, and a sweep starts no apply process', async () => {
    const repairs = metricValue(await metrics(A()), 'meshcap_repairs_total');
    const n = sweeps(A());
    await waitFor('two more sweeps', () => sweeps(A()) >= n + 2);
    expect(metricValue(await metrics(A()), 'meshcap_repairs_total')).toBe(repairs);
    expect(A().logged('swept').slice(n).map((r) => r['repairs'])).toEqual(A().logged('swept').slice(n).map(() => 0));
    // The same sweep in-process, with every command it starts recorded.
    const commands: string[] = [];
    const recording = (netns: string | undefined) => {
      const inner = createSpawnRunner(netns);
      return { run: (cmd: string, args: readonly string[], opts?: { input?: string }) => (commands.push([cmd, ...args].join(' ')), inner.run(cmd, args, opts)) };
    };
    const c = netConfSchema.parse({ cniVersion: '1.0.0', type: 'meshcap-cni', ...conf(), capabilities: { 'io.kubernetes.cri.pod-annotations': true } });
    const r = await sweepNode({ criSocket: L().socket, conf: c, host: nodeHost, makeRunner: recording, log: createLogger({ level: 'silent', format: 'json' }), repair: true });
    expect(r.pods.find((p) => p.name === 'web')).toMatchObject({ state: 'captured', repaired: false });
    expect(r.repairs).toBe(0);
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.filter((cmd) => /restore|^nft -f|^ip (-[46] )?(rule|route) (add|del)|^ipset/.test(cmd))).toEqual([]);
  });

  it('restores rules flushed by hand within two sweeps and keeps a foreign rule in that pod', async () => {
    const foreign = '-A INPUT -s 192.0.2.99/32 -j DROP';
    expect((await nsExec(P('web').netns, ['iptables', '-t', 'filter', ...foreign.split(' ')])).exitCode).toBe(0);
    const repairs = metricValue(await metrics(A()), 'meshcap_repairs_total') ?? 0;
    expect((await nsExec(P('web').netns, ['iptables', '-t', 'nat', '-F'])).exitCode).toBe(0);
    const n = sweeps(A());
    await waitFor('the rules back', async () => (await rulesOf(P('web').netns)).includes(REDIRECT), 15_000);
    await waitFor('the sweep that repaired them to be logged', () => A().logged('swept').slice(n).some((r) => Number(r['repairs']) > 0));
    expect(A().logged('swept').slice(n).findIndex((r) => Number(r['repairs']) > 0)).toBeLessThan(2);
    const rules = await rulesOf(P('web').netns);
    expect(rules).toContain(foreign);
    expect(rules).toContain('--dport 9999 -j RETURN');
    const text = await metrics(A());
    expect(metricValue(text, 'meshcap_repairs_total')).toBe(repairs + 1);
    expect(metricValue(text, 'meshcap_pod_repairs_total', 'found="bypassing"')).toBe(2);
  });

  it('node-status lists every pod with its state while the agent runs, and exits 0', async () => {
    const r = await nodeStatus();
    expect(r.code).toBe(0);
    expect(stateOf(r.pods, 'web')).toMatchObject({ namespace: 'default', state: 'captured', id: P('web').id });
    expect(stateOf(r.pods, 'bad')).toMatchObject({ state: 'error', reason: expect.stringContaining('excludeOutboundIPRanges') });
    expect(stateOf(r.pods, 'plain')).toMatchObject({ state: 'not-enrolled', reason: expect.stringContaining('no sidecar.istio.io/status annotation') });
    expect(stateOf(r.pods, 'optout')).toMatchObject({ state: 'not-enrolled', reason: 'sidecar.istio.io/inject is "false"' });
    expect(stateOf(r.pods, 'system')).toMatchObject({ state: 'not-enrolled', reason: 'namespace kube-system is excluded' });
    expect(stateOf(r.pods, 'hostnet')).toMatchObject({ state: 'not-enrolled', reason: expect.stringContaining('host network') });
    const table = await nodeStatus([]);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+SANDBOX\s+STATE\s+REASON$/);
    expect(table.stdout).toMatch(/default\s+web\s+\S+\s+captured/);
  });

  it('fails closed: SIGTERM leaves the entry and the binary, and a pod created while the agent is down still gets its rules', async () => {
    const r = await A().stop('SIGTERM');
    expect(r.exitCode).toBe(0);
    expect(A().logged('stopping: meshcap-cni stays in the chain (fail closed; --uninstall removes it)')).toHaveLength(1);
    expect(entryLast()).toEqual(['bridge', 'meshcap-cni']);
    expect(existsSync(join(L().binDir, 'meshcap-cni'))).toBe(true);
    await run('late', 'default', INJECTED);
    expect(await rulesOf(P('late').netns)).toContain(REDIRECT);
  });

  it('node-status with the agent stopped: a flushed pod is bypassing, a changed one drifted, exit 1', async () => {
    await nsExec(P('web').netns, ['iptables', '-t', 'nat', '-F']);
    await nsExec(P('late').netns, ['iptables', '-t', 'nat', '-A', 'ISTIO_OUTPUT', '-d', '192.0.2.1/32', '-j', 'RETURN']);
    const r = await nodeStatus();
    expect(r.code).toBe(1);
    expect(stateOf(r.pods, 'web')).toMatchObject({ state: 'bypassing' });
    expect(stateOf(r.pods, 'late')).toMatchObject({ state: 'drifted', reason: expect.stringContaining('unexpected: -A ISTIO_OUTPUT -d 192.0.2.1/32 -j RETURN') });
    expect(stateOf(r.pods, 'bad')).toMatchObject({ state: 'error' });
  });

  it('--repair false observes and reports, and changes nothing', async () => {
    const a = startAgent(L(), conf(), ['--repair', 'false']);
    others.push(a);
    await waitFor('two sweeps', () => sweeps(a) >= 2);
    const text = await metrics(a);
    expect(metricValue(text, 'meshcap_pods', 'state="bypassing"')).toBe(1);
    expect(metricValue(text, 'meshcap_pods', 'state="drifted"')).toBe(1);
    expect(metricValue(text, 'meshcap_repairs_total')).toBe(0);
    expect(await rulesOf(P('web').netns)).not.toContain(REDIRECT);
    expect((await a.stop('SIGINT')).exitCode).toBe(0);
    expect(entryLast()).toEqual(['bridge', 'meshcap-cni']);
  });

  it('a restarted agent repairs what broke while it was down, within two sweeps', async () => {
    agent = startAgent(L(), conf());
    await waitFor('both pods put back', async () => (await nodeStatus()).code === 0, 30_000);
    await waitFor('the repairing sweep logged', () => A().logged('swept').some((r) => Number(r['repairs']) === 2));
    expect(A().logged('swept').findIndex((r) => Number(r['repairs']) === 2)).toBeLessThan(2);
    expect(await rulesOf(P('late').netns)).not.toContain('192.0.2.1/32');
  });

  it('rides out the CRI socket going away and coming back: one warning, no error loop, healthy throughout', async () => {
    const away = `${L().socket}.away`;
    const errors = metricValue(await metrics(A()), 'meshcap_sweep_errors_total') ?? 0;
    renameSync(L().socket, away);
    try {
      await waitFor('a failed sweep', () => A().logged('sweep failed: the CRI cannot be asked; retrying every sweep').length > 0);
      await sleep(4500);
      expect(A().logged('sweep failed: the CRI cannot be asked; retrying every sweep')).toHaveLength(1);
      expect((await A().get('/healthz')).status).toBe(200);
      expect(metricValue(await metrics(A()), 'meshcap_sweep_errors_total')).toBeGreaterThan(errors + 1);
    } finally {
      renameSync(away, L().socket);
    }
    await waitFor('the CRI back', () => A().logged('the CRI answers again').length === 1);
    expect(A().records().filter((r) => r['level'] === 60)).toEqual([]);
  });

  it('sweeps racing the ADDs of new pods leave each pod with exactly its rules', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `race${i}`);
    await Promise.all(names.map((n) => run(n, 'default', INJECTED)));
    const n = sweeps(A());
    await waitFor('two more sweeps', () => sweeps(A()) >= n + 2);
    const r = await nodeStatus();
    expect(r.code).toBe(0);
    expect(names.map((name) => stateOf(r.pods, name)?.state)).toEqual(names.map(() => 'captured'));
    expect(A().logged('pod check failed').filter((x) => x['name'] !== 'bad')).toEqual([]);
    expect(pluginErrors()).toEqual([]);
  });

  it('leaves sandboxes removed during a sweep out of it, without an error: one gone before its status is read, one after', async () => {
    await Promise.all([run('gone1', 'default', INJECTED), run('gone2', 'default', INJECTED)]);
    const removed: string[] = [];
    /** The real CRI client, with the real removal of a pod at the moment the sweep reaches it (kubelet deleting it meanwhile). */
    class RemovingRuntime extends CriRuntime {
      override async sandbox(id: string) {
        if (id === P('gone1').id) {
          await L().removePod(id);
          removed.push('gone1');
        }
        const s = await super.sandbox(id);
        if (id === P('gone2').id) {
          await L().removePod(id);
          removed.push('gone2');
        }
        return s;
      }
    }
    const c = netConfSchema.parse({ cniVersion: '1.0.0', type: 'meshcap-cni', ...conf(), capabilities: { 'io.kubernetes.cri.pod-annotations': true } });
    const r = await sweepNode({ criSocket: L().socket, conf: c, host: nodeHost, makeRunner: createSpawnRunner, log: createLogger({ level: 'silent', format: 'json' }), repair: true, connect: (socket) => new RemovingRuntime(socket) });
    expect(removed.sort()).toEqual(['gone1', 'gone2']);
    expect(r.pods.filter((p) => p.name.startsWith('gone'))).toEqual([]);
    expect(r.pods.filter((p) => p.state === 'error').map((p) => p.name)).toEqual(['bad']);
    expect(r.pods.find((p) => p.name === 'web')?.state).toBe('captured');
  });

  it('survives SIGKILL mid-sweep: no pod is left half-configured, and the next agent captures everything within two sweeps', async () => {
    await A().stop('SIGTERM');
    for (const name of ['web', 'late', 'race0', 'race1']) await nsExec(P(name).netns, ['iptables', '-t', 'nat', '-F']);
    const killed = startAgent(L(), conf());
    others.push(killed);
    await waitFor('the agent to start sweeping', () => killed.logged('installed; watching').length > 0 || killed.logged('serving /metrics, /healthz, /readyz').length > 0);
    await sleep(30);
    await killed.stop('SIGKILL');
    const mid = await nodeStatus();
    // Each pod's rules change in one atomic restore: it is either still flushed or captured, never in between.
    for (const name of ['web', 'late', 'race0', 'race1']) expect(['bypassing', 'captured']).toContain(stateOf(mid.pods, name)?.state);
    const broken = ['web', 'late', 'race0', 'race1'].filter((name) => stateOf(mid.pods, name)?.state === 'bypassing').length;
    agent = startAgent(L(), conf());
    await waitFor('everything captured', async () => (await nodeStatus()).code === 0, 30_000);
    await waitFor('two sweeps', () => sweeps(A()) >= 2);
    expect(A().logged('swept').slice(0, 2).reduce((n, r) => n + Number(r['repairs']), 0)).toBe(broken);
    expect((await L().leftovers()).lockFiles).toBe(0);
  });

  it('--uninstall removes the entry and the binary', async () => {
    await A().stop('SIGTERM');
    const args = agentArgs(L(), conf(), 0, ['--uninstall']);
    const r = await execa(meshcap.file, [...meshcap.args, ...args], { reject: false });
    expect(r.exitCode).toBe(0);
    expect(entryLast()).toEqual(['bridge']);
    expect(existsSync(join(L().binDir, 'meshcap-cni'))).toBe(false);
  });
});

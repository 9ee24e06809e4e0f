import { describe, expect, it } from 'vitest';
import { handlePlugin } from '../../../cni/handler.js';
import { convertResult, SUPPORTED_VERSIONS } from '../../../cni/spec.js';
import type { RunResult, Runner } from '../../../src/exec/runner.js';
import { fakeHost } from '../../helpers/cli.js';

const ok = (stdout = ''): RunResult => ({ exitCode: 0, stdout, stderr: '' });

/** A runner that pretends to be a clean namespace with nft iptables, recording every command. */
function cleanNamespace(): Runner & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async run(cmd, args) {
      calls.push([cmd, ...args].join(' '));
      return cmd.endsWith('legacy-save') ? ok('') : ok('');
    },
  };
}

const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c0ffee', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin', CNI_ARGS: 'IgnoreUnknown=1' };
/** A Kubernetes pod as containerd describes it (CNI_ARGS), and an injected pod's status annotation. */
const POD_ARGS = { CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web;K8S_POD_UID=u1' };
const INJECTED = { 'sidecar.istio.io/status': JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };
const podAnnotations = (a: Record<string, string> | null) => ({ capabilities: { 'io.kubernetes.cri.pod-annotations': true }, runtimeConfig: { 'io.kubernetes.cri.pod-annotations': a } });
const PREV_1 = { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: '/proc/self/ns/net' }], ips: [{ address: '198.51.100.7/24', interface: 0, gateway: '198.51.100.1' }], dns: {} };

async function invoke(conf: Record<string, unknown>, env: Record<string, string | undefined> = {}, runner: Runner = cleanNamespace()) {
  let stderr = '';
  const out = await handlePlugin({
    env: { ...ENV, ...env },
    stdin: typeof conf['__raw'] === 'string' ? conf['__raw'] : JSON.stringify(conf),
    host: fakeHost(),
    stderr: { write: (s: string) => (stderr += s) },
    makeRunner: () => runner,
  });
  const json = out.stdout === '' ? undefined : (JSON.parse(out.stdout) as Record<string, unknown>);
  return { ...out, json, stderr };
}

const conf = (extra: Record<string, unknown> = {}) => ({ cniVersion: '1.0.0', name: 'net', type: 'meshcap-cni', prevResult: PREV_1, ipv6: 'off', ...extra });

describe('VERSION', () => {
  it.each(SUPPORTED_VERSIONS)('answers %s with every supported version', async (v) => {
    const r = await invoke({ __raw: JSON.stringify({ cniVersion: v }) } as never, { CNI_COMMAND: 'VERSION' });
    expect(r.exitCode).toBe(0);
    expect(r.json).toEqual({ cniVersion: v, supportedVersions: [...SUPPORTED_VERSIONS] });
  });

  it('answers with the latest version when stdin names none', async () => {
    const r = await invoke({ __raw: '' } as never, { CNI_COMMAND: 'VERSION', CNI_CONTAINERID: '', CNI_NETNS: 'dummy' });
    expect(r.json).toMatchObject({ cniVersion: '1.1.0' });
  });
});

describe('ADD', () => {
  it('applies the rules in CNI_NETNS and prints prevResult', async () => {
    const runner = cleanNamespace();
    const r = await invoke(conf(), {}, runner);
    expect(r.exitCode).toBe(0);
    expect(r.json).toEqual({ cniVersion: '1.0.0', interfaces: PREV_1.interfaces, ips: PREV_1.ips });
    // The fake host has no /proc/net/ip_tables_names: no legacy module, so no legacy save is run.
    expect(runner.calls).toEqual(['iptables-nft-save', 'iptables-nft-restore --noflush']);
    expect(r.stderr).toContain('"msg":"applied"');
  });

  it.each([['0.3.0'], ['0.3.1'], ['0.4.0'], ['1.0.0'], ['1.1.0']])('prints prevResult converted to cniVersion %s', async (v) => {
    const r = await invoke(conf({ cniVersion: v }));
    expect(r.exitCode).toBe(0);
    expect(r.json?.['cniVersion']).toBe(v);
    const ip = (r.json?.['ips'] as Record<string, unknown>[])[0];
    if (v.startsWith('0.')) {
      expect(ip).toMatchObject({ version: '4' });
      expect(r.json?.['dns']).toEqual({});
    } else {
      expect(ip).not.toHaveProperty('version');
      expect(r.json).not.toHaveProperty('dns');
    }
  });

  it('fails when there is no prevResult to pass on', async () => {
    const { prevResult: _p, ...noPrev } = conf();
    const r = await invoke(noPrev);
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ code: 7 });
    expect(String(r.json?.['msg'])).toContain('prevResult');
  });

  it('passes a pod in an excluded namespace through untouched', async () => {
    const runner = cleanNamespace();
    const r = await invoke(conf(), { CNI_ARGS: 'K8S_POD_NAMESPACE=kube-system;K8S_POD_NAME=coredns' }, runner);
    expect(r.exitCode).toBe(0);
    expect(runner.calls).toEqual([]);
    expect(r.json).toMatchObject({ ips: PREV_1.ips });
  });

  it('passes a pod that opts out by annotation through untouched', async () => {
    const runner = cleanNamespace();
    const r = await invoke(conf(podAnnotations({ ...INJECTED, 'sidecar.istio.io/inject': 'false' })), POD_ARGS, runner);
    expect(r.exitCode).toBe(0);
    expect(runner.calls).toEqual([]);
  });

  it('turns a bad annotation into a CNI error naming the annotation and the value', async () => {
    const r = await invoke(conf(podAnnotations({ ...INJECTED, 'traffic.sidecar.istio.io/includeInboundPorts': '80 -j DROP' })), POD_ARGS);
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ code: 7 });
    expect(String(r.json?.['msg'])).toContain('annotation traffic.sidecar.istio.io/includeInboundPorts="80 -j DROP"');
  });

  it('turns a bad config value into a CNI error naming the field', async () => {
    const r = await invoke(conf({ exclude_outbound_ports: '15020,70000' }));
    expect(r.json).toMatchObject({ code: 7 });
    expect(String(r.json?.['msg'])).toContain('config field exclude_outbound_ports="15020,70000"');
  });

  it('reports an iptables failure as code 100 with its error', async () => {
    const failing: Runner = { run: async (cmd) => (cmd.endsWith('-restore') ? { exitCode: 2, stdout: '', stderr: "iptables-restore: Couldn't load target `REDIRECT'" } : ok()) };
    const r = await invoke(conf(), {}, failing);
    expect(r.json).toMatchObject({ code: 100 });
    expect(String(r.json?.['details'])).toContain("Couldn't load target");
  });

  it('reports a held xtables lock as "try again later" (11)', async () => {
    const locked: Runner = { run: async (cmd) => (cmd.endsWith('-restore') ? { exitCode: 4, stdout: '', stderr: 'Another app is currently holding the xtables lock.' } : ok()) };
    const r = await invoke(conf(), {}, locked);
    expect(r.json).toMatchObject({ code: 11 });
  });
});

describe('malformed input', () => {
  it.each([
    ['stdin that is not JSON', { __raw: '{"cniVersion": ' }, {}, 6, 'not JSON'],
    ['an unknown config field', conf({ proxy_uuid: 5 }), {}, 2, 'proxy_uuid'],
    ['a config field of the wrong type', conf({ redirect_dns: 'yes' }), {}, 7, 'redirect_dns'],
    ['an unknown mode', conf({ mode: 'mesh' }), {}, 7, 'mode'],
    ['an unsupported cniVersion', conf({ cniVersion: '0.2.0' }), {}, 1, '0.2.0'],
    ['no CNI_COMMAND', conf(), { CNI_COMMAND: undefined }, 4, 'CNI_COMMAND'],
    ['an unknown CNI_COMMAND', conf(), { CNI_COMMAND: 'FLY' }, 4, 'CNI_COMMAND'],
    ['no CNI_CONTAINERID', conf(), { CNI_CONTAINERID: undefined }, 4, 'CNI_CONTAINERID'],
    ['a bad CNI_IFNAME', conf(), { CNI_IFNAME: 'eth0;rm' }, 4, 'CNI_IFNAME'],
    ['no CNI_NETNS on ADD', conf(), { CNI_NETNS: undefined }, 4, 'CNI_NETNS'],
    ['a relative CNI_NETNS', conf(), { CNI_NETNS: 'run/netns/x' }, 4, 'CNI_NETNS'],
    ['a malformed CNI_ARGS', conf(), { CNI_ARGS: 'K8S_POD_NAME' }, 4, 'CNI_ARGS'],
    ['an unknown CNI_ARGS key without IgnoreUnknown', conf(), { CNI_ARGS: 'FOO=bar' }, 4, 'FOO'],
  ])('%s → code %i', async (_name, c, env, code, mentions) => {
    const r = await invoke(c as Record<string, unknown>, env);
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ code });
    expect(String(r.json?.['msg'])).toContain(mentions);
  });
});

describe('DEL, CHECK, STATUS, GC', () => {
  it('DEL succeeds with no output when the namespace is already gone', async () => {
    const runner = cleanNamespace();
    const r = await invoke(conf(), { CNI_COMMAND: 'DEL', CNI_NETNS: '/run/netns/meshcap-gone' }, runner);
    expect(r).toMatchObject({ exitCode: 0, stdout: '' });
    expect(runner.calls).toEqual([]);
  });

  it('DEL without CNI_NETNS succeeds', async () => {
    const r = await invoke(conf(), { CNI_COMMAND: 'DEL', CNI_NETNS: undefined });
    expect(r).toMatchObject({ exitCode: 0, stdout: '' });
  });

  it('CHECK fails when the rules are missing, naming what is missing', async () => {
    const r = await invoke(conf(), { CNI_COMMAND: 'CHECK' });
    expect(r.json).toMatchObject({ code: 101 });
    expect(String(r.json?.['msg'])).toContain('missing: -N ISTIO_INBOUND (nat, ipv4)');
  });

  it('CHECK is refused for configs older than 0.4.0', async () => {
    const r = await invoke(conf({ cniVersion: '0.3.1' }), { CNI_COMMAND: 'CHECK' });
    expect(r.json).toMatchObject({ code: 1 });
  });

  it('STATUS succeeds when iptables-restore works and reports 50 when it does not', async () => {
    expect((await invoke(conf({ cniVersion: '1.1.0' }), { CNI_COMMAND: 'STATUS' })).exitCode).toBe(0);
    const missing: Runner = { run: async () => ({ exitCode: 127, stdout: '', stderr: 'iptables-restore: command not found' }) };
    const r = await invoke(conf({ cniVersion: '1.1.0' }), { CNI_COMMAND: 'STATUS' }, missing);
    expect(r.json).toMatchObject({ code: 50 });
  });

  it('GC removes probe ipset members of attachments that are gone, and keeps the rest', async () => {
    const calls: { cmd: string; input?: string }[] = [];
    const runner: Runner = {
      async run(cmd, args, opts) {
        calls.push({ cmd: [cmd, ...args].join(' '), ...(opts?.input ? { input: opts.input } : {}) });
        if (cmd === 'ipset' && args[0] === 'save') {
          return ok('create istio-inpod-probes-v4 hash:ip family inet comment\nadd istio-inpod-probes-v4 198.51.100.7 comment "live/eth0"\nadd istio-inpod-probes-v4 198.51.100.8 comment "dead/eth0"\nadd istio-inpod-probes-v4 198.51.100.9\n');
        }
        return ok();
      },
    };
    const r = await invoke(conf({ cniVersion: '1.1.0', mode: 'ambient', probe_ipset: true, 'cni.dev/valid-attachments': [{ containerID: 'live', ifname: 'eth0' }] }), { CNI_COMMAND: 'GC' }, runner);
    expect(r.exitCode).toBe(0);
    expect(calls.find((c) => c.cmd === 'ipset -exist restore')?.input).toBe('del istio-inpod-probes-v4 198.51.100.8\n');
  });
});

/** A runner whose namespace holds meshcap's sidecar chains (nft), recording what it is fed. */
function namespaceWithOurRules(): Runner & { calls: { cmd: string; input?: string }[] } {
  const calls: { cmd: string; input?: string }[] = [];
  const save = ['*nat', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':ISTIO_OUTPUT - [0:0]', ':ISTIO_REDIRECT - [0:0]', ':KUBE-X - [0:0]', '-A PREROUTING -j KUBE-X', '-A OUTPUT -p tcp -j ISTIO_OUTPUT', '-A ISTIO_OUTPUT -j ISTIO_REDIRECT', '-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001', 'COMMIT', ''].join('\n');
  return {
    calls,
    async run(cmd, args, opts) {
      calls.push({ cmd: [cmd, ...args].join(' '), ...(opts?.input ? { input: opts.input } : {}) });
      if (cmd === 'iptables-nft-save') return ok(save);
      if (cmd === 'ip') return ok('[]\n[]\n');
      return ok();
    },
  };
}

describe('enrollment at ADD', () => {
  it('accepts containerd\'s null annotations and leaves a pod without injection untouched', async () => {
    const runner = cleanNamespace();
    const r = await invoke(conf(podAnnotations(null)), POD_ARGS, runner);
    expect(r.exitCode).toBe(0);
    expect(runner.calls).toEqual([]);
    expect(r.stderr).toContain('"reason":"no sidecar.istio.io/status annotation (the pod was not injected)","msg":"pod passes through untouched"');
  });

  it('captures an injected pod and logs the decision once with its reason', async () => {
    const runner = cleanNamespace();
    const r = await invoke(conf(podAnnotations(INJECTED)), POD_ARGS, runner);
    expect(r.exitCode).toBe(0);
    expect(runner.calls).toContain('iptables-nft-restore --noflush');
    expect(r.stderr.match(/"msg":"pod enrolled"/g)).toHaveLength(1);
  });

  it('ignores sidecar.istio.io/inject "yes" with a warning', async () => {
    const r = await invoke(conf(podAnnotations({ ...INJECTED, 'sidecar.istio.io/inject': 'yes' })), POD_ARGS);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('ignored sidecar.istio.io/inject=\\"yes\\"');
  });

  it('accepts ambient.istio.io/redirection "pending" on an ambient network', async () => {
    const r = await invoke(conf({ mode: 'ambient', ...podAnnotations({ 'ambient.istio.io/redirection': 'pending' }) }), POD_ARGS);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('"msg":"pod enrolled"');
  });

  it('fails ADD naming a status annotation that is not a JSON object', async () => {
    const r = await invoke(conf(podAnnotations({ 'sidecar.istio.io/status': 'yes please' })), POD_ARGS);
    expect(r.json).toMatchObject({ code: 7 });
    expect(String(r.json?.['msg'])).toContain('invalid annotation sidecar.istio.io/status="yes please"');
  });
});

describe('DEL never fails because of config or annotations', () => {
  const DEL = { ...POD_ARGS, CNI_COMMAND: 'DEL' };

  it('removes our chains and jumps by ownership, keeping the rules that are not ours', async () => {
    const runner = namespaceWithOurRules();
    const r = await invoke(conf(podAnnotations(INJECTED)), DEL, runner);
    expect(r).toMatchObject({ exitCode: 0, stdout: '' });
    const input = runner.calls.find((c) => c.cmd === 'iptables-nft-restore --noflush')?.input ?? '';
    expect(input).toContain('-D OUTPUT -p tcp -j ISTIO_OUTPUT');
    expect(input).toContain('-X ISTIO_REDIRECT');
    expect(input).not.toContain('KUBE-X');
  });

  it('succeeds for the bad annotation that failed ADD, and still removes what is ours', async () => {
    const runner = namespaceWithOurRules();
    const r = await invoke(conf(podAnnotations({ ...INJECTED, 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '10.0.0.0/33' })), DEL, runner);
    expect(r.exitCode).toBe(0);
    expect(runner.calls.some((c) => c.cmd === 'iptables-nft-restore --noflush')).toBe(true);
  });

  it('succeeds for a status annotation that is not JSON', async () => {
    const r = await invoke(conf(podAnnotations({ 'sidecar.istio.io/status': '{' })), DEL, namespaceWithOurRules());
    expect(r.exitCode).toBe(0);
  });

  it('succeeds for a config it cannot parse, removing by ownership', async () => {
    const runner = namespaceWithOurRules();
    const r = await invoke(conf({ proxy_uuid: 5, exclude_outbound_ports: 'x' }), DEL, runner);
    expect(r).toMatchObject({ exitCode: 0, stdout: '' });
    expect(r.stderr).toContain('config unreadable');
    expect(runner.calls.some((c) => c.cmd === 'iptables-nft-restore --noflush')).toBe(true);
  });

  it('is a no-op for a pod the decision skipped', async () => {
    const runner = namespaceWithOurRules();
    const r = await invoke(conf(podAnnotations({ 'sidecar.istio.io/status': status(['istio-init'], ['istio-proxy']) })), DEL, runner);
    expect(r.exitCode).toBe(0);
    expect(runner.calls).toEqual([]);
    expect(r.stderr).toContain('pod was not enrolled: nothing to remove');
  });

  it.each([['empty', ''], ['missing', undefined], ['not a namespace (already unmounted)', '/proc/self/cmdline']])('succeeds with a CNI_NETNS that is %s, touching nothing', async (_n, netns) => {
    const runner = namespaceWithOurRules();
    const r = await invoke(conf(podAnnotations(INJECTED)), { ...DEL, CNI_NETNS: netns }, runner);
    expect(r).toMatchObject({ exitCode: 0, stdout: '' });
    expect(runner.calls).toEqual([]);
  });

  it('CHECK of a skipped pod succeeds without looking at the namespace', async () => {
    const runner = namespaceWithOurRules();
    const r = await invoke(conf(podAnnotations(null)), { ...POD_ARGS, CNI_COMMAND: 'CHECK' }, runner);
    expect(r).toMatchObject({ exitCode: 0, stdout: '' });
    expect(runner.calls).toEqual([]);
  });
});

const status = (initContainers: string[], containers: string[]) => JSON.stringify({ initContainers, containers });

describe('convertResult', () => {
  it('round-trips a 0.4.0 result through 1.0.0', () => {
    const v040 = { cniVersion: '0.4.0', ips: [{ version: '6', address: '2001:db8::7/64' }], routes: [{ dst: '0.0.0.0/0' }], dns: { nameservers: ['192.0.2.53'] } };
    const v100 = convertResult(v040, '1.0.0');
    expect(v100).toEqual({ cniVersion: '1.0.0', ips: [{ address: '2001:db8::7/64' }], routes: [{ dst: '0.0.0.0/0' }], dns: { nameservers: ['192.0.2.53'] } });
    expect(convertResult(v100, '0.4.0')).toEqual(v040);
  });
});

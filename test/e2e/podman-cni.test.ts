import { execa } from 'execa';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { PodmanLab } from '../helpers/podman.js';
import { REPO_ROOT } from '../helpers/paths.js';

requireRoot();

const PROBE = resolve(REPO_ROOT, 'test', 'fixtures', 'tcp_probe.py');
const nsExec = (netns: string, args: readonly string[]) => execa('nsenter', [`--net=${netns}`, '--', ...args], { reject: false });
const saveIn = async (netns: string, cmd = 'iptables-save') => (await nsExec(netns, [cmd])).stdout;
const hostHasIstio = async () => (await execa('iptables-save', [], { reject: false })).stdout.includes('ISTIO_');

/**
 * meshcap-cni under a real container runtime: podman (CNI backend) runs containers on
 * [bridge + host-local, meshcap-cni] and calls the plugin for ADD and DEL, as a kubelet's runtime would.
 */
describe('meshcap-cni chained after bridge under podman', () => {
  let lab: PodmanLab | undefined;
  const L = () => lab as PodmanLab;
  let hostIstioBefore = false;
  beforeAll(async () => {
    lab = new PodmanLab();
    hostIstioBefore = await hostHasIstio();
  });
  afterAll(async () => {
    await lab?.destroy();
  });

  it('installs the sidecar rules in the container namespace and redirects real outbound TCP to 15001', async () => {
    const net = L().addNetwork('1.0.0', { mode: 'sidecar', ipv6: 'off' });
    const { id, exitCode, stderr } = await L().run(net);
    expect(stderr).toBe('');
    expect(exitCode).toBe(0);
    const netns = await L().inspect(id, '{{.NetworkSettings.SandboxKey}}');
    const ip = await L().inspect(id, `{{(index .NetworkSettings.Networks "${net}").IPAddress}}`);
    expect(ip).toMatch(/^198\.51\.100\./);
    const rules = await saveIn(netns);
    expect(rules).toContain('-A ISTIO_OUTPUT -j ISTIO_REDIRECT');
    expect(rules).toContain('-A ISTIO_INBOUND -p tcp -m tcp --dport 15021 -j RETURN');
    expect(await hostHasIstio()).toBe(hostIstioBefore);

    // A proxy on 15001 as UID 1337 inside the container's namespace; the app's connection lands there.
    const proxy = execa('nsenter', [`--net=${netns}`, '--', 'setpriv', '--reuid=1337', '--regid=1337', '--clear-groups', '/usr/bin/python3', PROBE, 'serve', 'proxy', '15001'], { reject: false, buffer: false });
    try {
      await new Promise<void>((ok, fail) => {
        const timer = setTimeout(() => fail(new Error('proxy did not start')), 10_000);
        proxy.stdout?.on('data', (d: Buffer) => d.toString().includes('READY') && (clearTimeout(timer), ok()));
      });
      const r = await nsExec(netns, ['setpriv', '--reuid=1000', '--regid=1000', '--clear-groups', '/usr/bin/python3', PROBE, 'connect', '198.51.100.250', '9000', '--timeout', '2']);
      expect(r.stdout.trim()).toMatch(/^proxy 15001 198\.51\.100\.250 9000 /);
    } finally {
      proxy.kill('SIGKILL');
      await proxy.catch(() => undefined);
    }
  });

  it('survives stop, start, restart and rm (DEL then ADD) with no residue and no errors', async () => {
    const net = L().addNetwork('0.4.0', { mode: 'sidecar', ipv6: 'off' });
    const { id } = await L().run(net);
    for (const step of [['stop', '-t', '0'], ['start'], ['restart', '-t', '0']]) {
      const r = await L().podman([...step, id]);
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
    }
    const netns = await L().inspect(id, '{{.NetworkSettings.SandboxKey}}');
    expect((await saveIn(netns)).match(/-A OUTPUT -j ISTIO_OUTPUT/g)).toHaveLength(1);
    expect((await L().podman(['rm', '-f', '-t', '0', id])).exitCode).toBe(0);
    expect((await execa('test', ['-e', netns], { reject: false })).exitCode).not.toBe(0);
    const log = L().pluginLog();
    expect(log).toContain('"command":"DEL"');
    expect(log.match(/"command":"ADD"/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(log).not.toContain('"level":50');
    expect(await hostHasIstio()).toBe(hostIstioBefore);
  });

  it('installs the ambient rules and the ip rule for an ambient network', async () => {
    const net = L().addNetwork('1.0.0', { mode: 'ambient', inbound: 'redirect', redirect_dns: true, ipv6: 'off' });
    const { id, exitCode } = await L().run(net);
    expect(exitCode).toBe(0);
    const netns = await L().inspect(id, '{{.NetworkSettings.SandboxKey}}');
    const rules = await saveIn(netns);
    expect(rules).toContain('-A ISTIO_PRERT -m mark --mark 0x539/0xfff -j CONNMARK --set-xmark 0x111/0xfff');
    expect(rules).toContain('-j REDIRECT --to-ports 15006');
    expect((await nsExec(netns, ['ip', 'rule', 'show'])).stdout).toContain('fwmark 0x111/0xfff lookup 100');
    await L().podman(['rm', '-f', '-t', '0', id]);
  });

  it('makes `podman run` fail with our error message on a broken config', async () => {
    const net = L().addNetwork('1.0.0', { mode: 'sidecar', exclude_outbound_ports: '15020,70000' });
    const r = await L().run(net);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('config field exclude_outbound_ports="15020,70000"');
  });
});

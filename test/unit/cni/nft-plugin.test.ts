import { describe, expect, it } from 'vitest';
import { handlePlugin } from '../../../cni/handler.js';
import type { Runner } from '../../../src/exec/runner.js';
import { fakeHost } from '../../helpers/cli.js';

/** The CNI door with `native_nftables: true`, against a runner that records commands and their stdin. */
/** Records every command; its probe sees a fresh pod (no nf_tables tables), as netlink would. */
function recorder(): Runner & { calls: { cmd: string; input: string }[] } {
  const calls: { cmd: string; input: string }[] = [];
  return {
    calls,
    probe: async () => ({ nftTables: [], legacyTables: { ipv4: '', ipv6: '' } }),
    async run(cmd, args, opts) {
      calls.push({ cmd: [cmd, ...args].join(' '), input: opts?.input ?? '' });
      return { exitCode: 0, stdout: '', stderr: '' };
    },
  };
}

const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c0ffee', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin', CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web' };
const PREV = { cniVersion: '1.0.0', ips: [{ address: '198.51.100.7/24' }] };

async function add(extra: Record<string, unknown>, runner = recorder()) {
  const out = await handlePlugin({
    env: ENV,
    stdin: JSON.stringify({ cniVersion: '1.0.0', name: 'net', type: 'meshcap-cni', prevResult: PREV, ipv6: 'off', native_nftables: true, ...extra }),
    host: fakeHost(),
    stderr: { write: () => undefined },
    makeRunner: () => runner,
  });
  return { ...out, runner };
}

describe('meshcap-cni ADD with native_nftables', () => {
  it('applies the sidecar rules with one nft transaction and nothing else', async () => {
    const injected = { 'sidecar.istio.io/status': JSON.stringify({ containers: ['app', 'istio-proxy'], initContainers: [] }) };
    const r = await add({ capabilities: { 'io.kubernetes.cri.pod-annotations': true }, runtimeConfig: { 'io.kubernetes.cri.pod-annotations': injected } });
    expect(r.exitCode).toBe(0);
    expect(r.runner.calls.map((c) => c.cmd)).toEqual(['nft -f -']);
    expect(r.runner.calls[0]?.input).toContain('add table inet istio-proxy-nat\nflush table inet istio-proxy-nat\n');
  });

  it('uses the redirect layout for ambient when the config names no inbound layout', async () => {
    const r = await add({ mode: 'ambient' });
    expect(r.exitCode).toBe(0);
    // Ambient routes: the probe saw none of our tables, so a routing failure would only delete them again —
    // no read first, the transaction is the one nft process.
    expect(r.runner.calls.map((c) => c.cmd).filter((c) => c.startsWith('nft'))).toEqual(['nft -f -']);
    expect(r.runner.calls[0]?.input).toContain('redirect to :15006');
  });

  it('refuses the tproxy layout for ambient, naming the config field', async () => {
    const r = await add({ mode: 'ambient', inbound: 'tproxy' });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/config field inbound/);
    expect(r.stdout).toMatch(/only the redirect layout/);
    expect(r.runner.calls).toEqual([]);
  });
});

import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { netnsPool, requireRoot, type Netns } from '../helpers/netns.js';
import { nftListing } from '../helpers/nft.js';
import { entryCommand } from '../helpers/paths.js';

requireRoot();

/**
 * The CNI door in native nftables mode (`native_nftables: true`): ADD installs the same tables the CLI's
 * dry-run predicts, CHECK compares nft state, DEL removes the tables; for ambient with `probe_ipset` the
 * node's probe set is kept in step in the same transactions.
 */
const { file, args } = entryCommand('meshcap-cni');
/** An injected pod, as containerd passes its annotations (the entry declares the capability). */
const INJECTED = {
  capabilities: { 'io.kubernetes.cri.pod-annotations': true },
  runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { 'sidecar.istio.io/status': JSON.stringify({ containers: ['app', 'istio-proxy'], initContainers: [] }) } },
};
const ISTIO_CNI_FLAGS = ['-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15020,15021,15090', '-o', '15020', '--ipv6', 'off'];

function cni(command: string, pod: Netns, conf: object, opts: { id?: string; node?: Netns } = {}) {
  const id = opts.id ?? 'pod0';
  const env = { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni', CNI_ARGS: `K8S_POD_NAMESPACE=default;K8S_POD_NAME=${id}` };
  const input = JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', ipv6: 'off', native_nftables: true, ...conf, prevResult: { cniVersion: '1.0.0', ips: [{ address: '198.51.100.2/24' }] } });
  const argv = opts.node === undefined ? [file, ...args] : ['ip', 'netns', 'exec', opts.node.name, file, ...args];
  return execa(argv[0] ?? '', argv.slice(1), { reject: false, input, env });
}

describe('meshcap-cni with native_nftables', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);
  const netns = pool.make;

  it('ADD installs what the dry-run predicts, CHECK passes then reports a foreign rule in our table, DEL removes the tables', async () => {
    const pod = await netns('mcnftcni');
    const add = await cni('ADD', pod, INJECTED);
    expect(add.exitCode).toBe(0);
    const meshcap = entryCommand();
    const dry = await execa(meshcap.file, [...meshcap.args, '--native-nftables', '-n', ...ISTIO_CNI_FLAGS], { stripFinalNewline: false });
    expect(await nftListing(pod)).toBe(dry.stdout);
    expect((await cni('CHECK', pod, INJECTED)).exitCode).toBe(0);
    await pod.run('nft', ['add', 'rule', 'inet', 'istio-proxy-nat', 'istio-output', 'counter']);
    const check = await cni('CHECK', pod, INJECTED);
    expect(check.exitCode).not.toBe(0);
    expect(check.stdout).toContain('unexpected: chain istio-output: counter (inet istio-proxy-nat)');
    expect((await cni('DEL', pod, INJECTED)).exitCode).toBe(0);
    expect(await nftListing(pod)).toBe('');
  });

  it('DEL removes our nft tables by ownership, even when the config it is given no longer parses', async () => {
    const pod = await netns('mcnftdel');
    expect((await cni('ADD', pod, INJECTED)).exitCode).toBe(0);
    await pod.run('nft', ['add', 'table', 'inet', 'foreign']);
    const del = await cni('DEL', pod, { ...INJECTED, no_such_field: true });
    expect(del.exitCode).toBe(0);
    expect(await nftListing(pod)).toBe('table inet foreign {\n}\n');
  });

  it("keeps the node's nft probe set in step with ambient ADD and DEL, the attachment as the element comment", async () => {
    const node = await netns('mcnftnode');
    const pod = await netns('mcnftamb');
    const conf = { mode: 'ambient', probe_ipset: true, kubelet_uid: 0 };
    const add = await cni('ADD', pod, conf, { id: 'amb0', node });
    expect(add.stdout).not.toContain('"code"');
    expect(add.exitCode).toBe(0);
    expect(await nftListing(pod)).toContain('table inet istio-ambient-nat');
    const hostListing = await nftListing(node);
    expect(hostListing).toContain('elements = { 198.51.100.2 comment "amb0/eth0" }');
    expect(hostListing).toContain('meta l4proto tcp meta skuid 0 ip daddr @istio-inpod-probes-v4 counter snat ip to 169.254.7.127');
    expect((await cni('DEL', pod, conf, { id: 'amb0', node })).exitCode).toBe(0);
    expect(await nftListing(pod)).toBe('');
    expect(await nftListing(node)).not.toContain('elements');
  });
});

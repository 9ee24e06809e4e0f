import { execa } from 'execa';
import { INJECTED_POD, ISTIO_CNI_FLAGS, runCni, type CniCall } from '../helpers/cni.js';
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
const INJECTED = INJECTED_POD;
/** Native mode on every call here. */
const cni = (command: string, pod: Netns, conf: object, call: CniCall = {}) => runCni(command, pod, { native_nftables: true, ...conf }, call);

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

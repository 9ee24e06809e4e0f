import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { nftListing } from '../helpers/nft.js';
import { ADDR, APP, PodTopology, ROOT } from '../helpers/topology.js';

requireRoot();

/**
 * Ambient in-pod redirection and the node side as native nftables, over real TCP and UDP. In the pod a
 * ztunnel stand-in (root; 15001/15006/15008 and DNS 15053; its own sockets carry SO_MARK 0x539) and an app on
 * 8080; the peer plays the remote host, a DNS server and the node, where `ambient-host --native-nftables`
 * SNATs the kubelet's (here: root's, --kubelet-uid 0) connections to pods in the probe sets.
 */
const ZTUNNEL_MARK = 0x539;
const PROBE_V4 = '169.254.7.127';
const PROBE_V6 = '2001:db8:7127::1';
const NFT = '--native-nftables';

describe('ambient in-pod rules as native nftables, IPv4 and IPv6', () => {
  let topo: PodTopology | undefined;
  const t = () => topo as PodTopology;
  const host = (extra: readonly string[]) => t().meshcap(['ambient-host', NFT, '--kubelet-uid', '0', '--ipv6', 'on', '--host-probe-snat-v6', PROBE_V6, ...extra], t().peer);

  beforeAll(async () => {
    topo = await PodTopology.create();
    await t().serve(t().pod, ROOT, 'ztunnel', [15001, 15006, 15008, 15053]);
    await t().serve(t().pod, ROOT, 'ztunnel-dns', [15053], { udp: true });
    await t().serve(t().pod, APP, 'app', [8080]);
    await t().serve(t().peer, ROOT, 'peer', [9000, 53]);
    await t().serve(t().peer, ROOT, 'peer-dns', [53], { udp: true });
    const r = await t().meshcap(['ambient', NFT, '--inbound', 'redirect', '--redirect-dns', '--ipv6', 'on', '--host-probe-snat-v6', PROBE_V6]);
    expect(r.stderr).not.toContain('"level":50');
    expect(r.exitCode).toBe(0);
    expect((await t().pod.run('iptables-nft-save', [])).stdout).not.toContain('ISTIO_');
    expect(await nftListing(t().pod)).toContain('table inet istio-ambient-nat');
  });
  afterAll(async () => {
    await topo?.destroy();
  });

  it.each([
    [ADDR.podV4, `ztunnel 15006 ${ADDR.podV4} 8080 ${ADDR.peerV4}`],
    [ADDR.podV6, `ztunnel 15006 ${ADDR.podV6} 8080 ${ADDR.peerV6}`],
  ])('sends inbound plaintext to %s:8080 to 15006 with its original destination', async (addr, expected) => {
    expect(await t().connect(t().peer, APP, addr, 8080)).toBe(expected);
  });

  it.each([[ADDR.podV4], [ADDR.podV6]])('lets HBONE to %s:15008 land on 15008 untouched', async (addr) => {
    expect(await t().connect(t().peer, APP, addr, 15008)).toMatch(new RegExp(`^ztunnel 15008 ${addr} 15008 `));
  });

  it.each([[ADDR.remoteV4], [ADDR.remoteV6]])("sends the app's outbound connection to %s to 15001 with its original destination", async (addr) => {
    expect(await t().connect(t().pod, APP, addr, 9000)).toMatch(new RegExp(`^ztunnel 15001 ${addr} 9000 `));
  });

  it.each([[ADDR.remoteV4], [ADDR.remoteV6]])("lets ztunnel's own marked connection to %s go out untouched", async (addr) => {
    expect(await t().connect(t().pod, ROOT, addr, 9000, undefined, { mark: ZTUNNEL_MARK })).toMatch(/^peer 9000 /);
  });

  it.each([[ADDR.podV4], [ADDR.podV6]])("lets ztunnel's own marked connection to the app at %s through", async (addr) => {
    expect(await t().connect(t().pod, ROOT, addr, 8080, undefined, { mark: ZTUNNEL_MARK })).toMatch(/^app 8080 /);
  });

  it.each([[ADDR.peerV4], [ADDR.peerV6]])('captures UDP DNS to %s on 15053', async (addr) => {
    expect(await t().udp(t().pod, APP, addr, 53)).toBe('ztunnel-dns 15053');
  });

  it('captures TCP DNS on 15053 with its original destination', async () => {
    expect(await t().connect(t().pod, APP, ADDR.peerV4, 53)).toMatch(new RegExp(`^ztunnel 15053 ${ADDR.peerV4} 53 `));
  });

  it("lets the node's probe, SNATed through the nft probe sets, reach the app directly, and stops when the pod leaves the sets", async () => {
    const add = await host(['--add-pod-ip', `${ADDR.podV4},${ADDR.podV6}`]);
    expect(add.stderr).not.toContain('"level":50');
    expect(add.exitCode).toBe(0);
    expect(await nftListing(t().peer)).toMatch(/elements = \{ 198\.51\.100\.2 \}/);
    expect(await t().connect(t().peer, ROOT, ADDR.podV4, 8080)).toBe(`app 8080 ${ADDR.podV4} 8080 ${PROBE_V4}`);
    expect(await t().connect(t().peer, ROOT, ADDR.podV6, 8080)).toBe(`app 8080 ${ADDR.podV6} 8080 ${PROBE_V6}`);
    // Another UID on the node is not the kubelet: no SNAT, ordinary inbound capture.
    expect(await t().connect(t().peer, APP, ADDR.podV4, 8080)).toMatch(/^ztunnel 15006 /);
    const remove = await host(['--remove-pod-ip', `${ADDR.podV4},${ADDR.podV6}`]);
    expect(remove.exitCode).toBe(0);
    expect(await t().connect(t().peer, ROOT, ADDR.podV4, 8080)).toMatch(/^ztunnel 15006 /);
    const clean = await host(['--cleanup-only']);
    expect(clean.exitCode).toBe(0);
    expect(await nftListing(t().peer)).toBe('');
  });

  it('cleanup removes the tables, the ip rules and the routes, and DNS reaches the real server again', async () => {
    const r = await t().meshcap(['ambient', NFT, '--inbound', 'redirect', '--ipv6', 'on', '--cleanup-only']);
    expect(r.exitCode).toBe(0);
    expect(await nftListing(t().pod)).toBe('');
    for (const fam of ['-4', '-6']) {
      expect((await t().pod.run('ip', [fam, 'rule', 'show'])).stdout).not.toContain('lookup 100');
      expect((await t().pod.run('ip', [fam, 'route', 'show', 'table', '100'])).stdout).toBe('');
    }
    expect(await t().udp(t().pod, APP, ADDR.peerV4, 53)).toBe('peer-dns 53');
  });
});

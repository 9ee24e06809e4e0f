import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { nftListing } from '../helpers/nft.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { ADDR, APP, PROXY, PodTopology, ROOT } from '../helpers/topology.js';

requireRoot();

/**
 * Real TCP and UDP through native nftables rules (no iptables rule in the pod): a test proxy (UID 1337) on
 * 15001/15006 that answers with the original destination, its DNS agent on 15053 (TCP and UDP), an app on
 * 8080, health listeners on 15020/15021/15090; the peer answers on 9000 and runs a DNS server on 53.
 */
const NFT = '--native-nftables';

function withPod(title: string, args: readonly string[], tproxy: boolean, body: (t: () => PodTopology) => void): void {
  describe(title, () => {
    let topo: PodTopology | undefined;
    const t = () => topo as PodTopology;
    beforeAll(async () => {
      topo = await PodTopology.create();
      await t().serve(t().pod, tproxy ? { ...PROXY, caps: ['net_admin'] } : PROXY, 'proxy', [15001, 15006, 15053], { transparent: tproxy });
      await t().serve(t().pod, PROXY, 'agent-dns', [15053], { udp: true });
      await t().serve(t().pod, APP, 'app', [8080]);
      await t().serve(t().pod, APP, 'health', [15020, 15021, 15090]);
      await t().serve(t().peer, APP, 'peer', [9000]);
      await t().serve(t().peer, ROOT, 'peer-dns', [53], { udp: true });
      const r = await t().meshcap(args);
      expect(r.stderr).not.toContain('"level":50');
      expect(r.exitCode).toBe(0);
      // Native mode leaves iptables alone: the capture is the inet tables' alone.
      expect((await t().pod.run('iptables-nft-save', [])).stdout).not.toContain('ISTIO_');
      expect(await nftListing(t().pod)).toContain('table inet istio-proxy-nat');
    });
    afterAll(async () => {
      await topo?.destroy();
    });
    body(t);
  });
}

const DNS = ['--redirect-dns', '--dns-servers', `${ADDR.peerV4},${ADDR.peerV6}`];

withPod('native nftables, REDIRECT, IPv4 and IPv6, DNS capture', [...ISTIO_INIT_ARGS, NFT, '--ipv6', 'on', ...DNS], false, (t) => {
  it.each([[ADDR.remoteV4], [ADDR.remoteV6]])("sends the app's outbound connection to %s to 15001 with its original destination", async (host) => {
    expect(await t().connect(t().pod, APP, host, 9000)).toMatch(new RegExp(`^proxy 15001 ${host} 9000 `));
  });

  it.each([[ADDR.remoteV4], [ADDR.remoteV6]])("lets the proxy's own connection to %s go straight out", async (host) => {
    expect(await t().connect(t().pod, PROXY, host, 9000)).toMatch(/^peer 9000 /);
  });

  it.each([[ADDR.podV4], [ADDR.podV6]])('sends inbound connections to %s:8080 to 15006 with their original destination', async (host) => {
    expect(await t().connect(t().peer, APP, host, 8080)).toMatch(new RegExp(`^proxy 15006 ${host} 8080 `));
  });

  it.each([
    [ADDR.podV4, 15020],
    [ADDR.podV4, 15021],
    [ADDR.podV6, 15090],
  ])('lets inbound %s:%i (an excluded health port) reach its listener', async (host, port) => {
    expect(await t().connect(t().peer, APP, host, port)).toMatch(new RegExp(`^health ${port} `));
  });

  it.each([
    [ADDR.podV4, '127.0.0.6'],
    [ADDR.podV6, '::6'],
  ])("lets the proxy's inbound passthrough to %s from %s reach the app", async (host, source) => {
    expect(await t().connect(t().pod, PROXY, host, 8080, source)).toMatch(/^app 8080 /);
  });

  it.each([[ADDR.peerV4], [ADDR.peerV6]])("sends the app's UDP DNS to %s to the agent on 15053", async (host) => {
    expect(await t().udp(t().pod, APP, host, 53)).toBe('agent-dns 15053');
  });

  it("sends the app's TCP DNS to the agent on 15053 with its original destination", async () => {
    expect(await t().connect(t().pod, APP, ADDR.peerV4, 53)).toMatch(new RegExp(`^proxy 15053 ${ADDR.peerV4} 53 `));
  });

  it("lets the agent's own DNS query reach the real server", async () => {
    expect(await t().udp(t().pod, PROXY, ADDR.peerV4, 53)).toBe('peer-dns 53');
  });

  it("does not capture the app's connection to localhost", async () => {
    expect(await t().connect(t().pod, APP, '127.0.0.1', 8080)).toMatch(/^app 8080 /);
  });
});

const TPROXY = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-i', '*', '-b', '*', '-d', '15090,15021,15020', NFT, '--ipv6', 'on'];
withPod('native nftables, TPROXY inbound, IPv4 and IPv6', TPROXY, true, (t) => {
  it.each([
    [ADDR.podV4, `proxy 15006 ${ADDR.podV4} 8080 ${ADDR.peerV4}`],
    [ADDR.podV6, `proxy 15006 ${ADDR.podV6} 8080 ${ADDR.peerV6}`],
  ])('delivers inbound %s:8080 to the transparent listener on 15006, source and destination kept', async (host, expected) => {
    expect(await t().connect(t().peer, APP, host, 8080)).toBe(expected);
  });

  it.each([[ADDR.podV4], [ADDR.podV6]])('lets inbound %s:15021 reach the health listener', async (host) => {
    expect(await t().connect(t().peer, APP, host, 15021)).toMatch(/^health 15021 /);
  });

  it.each([[ADDR.remoteV4], [ADDR.remoteV6]])("still redirects the app's outbound connection to %s to 15001", async (host) => {
    expect(await t().connect(t().pod, APP, host, 9000)).toMatch(new RegExp(`^proxy 15001 ${host} 9000 `));
  });

  it("lets the proxy's own outbound connection go straight out", async () => {
    expect(await t().connect(t().pod, PROXY, ADDR.remoteV6, 9000)).toMatch(/^peer 9000 /);
  });
});

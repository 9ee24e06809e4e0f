import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot, saveTables } from '../helpers/netns.js';
import { saveOf } from '../helpers/meshcap.js';
import { ADDR, APP, PodTopology, ROOT } from '../helpers/topology.js';
import { FOREIGN_V4, FOREIGN_V6 } from '../fixtures/foreign-rules.js';

requireRoot();

/**
 * Ambient in-pod redirection over real TCP and UDP. In the pod: a ztunnel stand-in (root, listeners on
 * 15001/15006/15008 and DNS 15053 TCP+UDP; transparent for the tproxy layout; its own connections carry
 * SO_MARK 0x539) and an app on 8080. The peer namespace plays the remote host, a DNS server on port 53, and
 * the node: `meshcap ambient-host` runs there to SNAT its own connections to pods in the probe ipset.
 */
const ZTUNNEL_MARK = 0x539;
/** A documentation address for the IPv6 probe SNAT, on both sides. */
const PROBE_V6 = '2001:db8:7127::1';
const PROBE_V4 = '169.254.7.127';

for (const layout of ['redirect', 'tproxy'] as const) {
  describe(`ambient, ${layout} layout, IPv4 and IPv6`, () => {
    let topo: PodTopology | undefined;
    const t = () => topo as PodTopology;
    const args = ['ambient', '--inbound', layout, '--redirect-dns', '--ipv6', 'on', '--host-probe-snat-v6', PROBE_V6];
    let before: { v4: string; v6: string } | undefined;

    beforeAll(async () => {
      topo = await PodTopology.create();
      await t().pod.run('iptables-restore', ['--noflush'], { input: FOREIGN_V4 });
      await t().pod.run('ip6tables-restore', ['--noflush'], { input: FOREIGN_V6 });
      before = { v4: await saveOf(t().pod, 'ipv4', 'nft'), v6: await saveOf(t().pod, 'ipv6', 'nft') };
      await t().serve(t().pod, ROOT, 'ztunnel', [15001, 15006, 15008, 15053], { transparent: layout === 'tproxy' });
      await t().serve(t().pod, ROOT, 'ztunnel-dns', [15053], { udp: true });
      await t().serve(t().pod, APP, 'app', [8080]);
      await t().serve(t().peer, ROOT, 'peer', [9000, 53]);
      await t().serve(t().peer, ROOT, 'peer-dns', [53], { udp: true });
      const r = await t().meshcap(args);
      expect(r.stderr).not.toContain('"level":50');
      expect(r.exitCode).toBe(0);
    });
    afterAll(async () => {
      await topo?.destroy();
    });

    it.each([
      [ADDR.podV4, `ztunnel 15006 ${ADDR.podV4} 8080 ${ADDR.peerV4}`],
      [ADDR.podV6, `ztunnel 15006 ${ADDR.podV6} 8080 ${ADDR.peerV6}`],
    ])('sends inbound plaintext to %s:8080 to 15006 with its original destination', async (host, expected) => {
      expect(await t().connect(t().peer, APP, host, 8080)).toBe(expected);
    });

    it.each([[ADDR.podV4], [ADDR.podV6]])('lets HBONE to %s:15008 land on 15008', async (host) => {
      expect(await t().connect(t().peer, APP, host, 15008)).toMatch(new RegExp(`^ztunnel 15008 ${host} 15008 `));
    });

    it.each([[ADDR.remoteV4], [ADDR.remoteV6]])("sends the app's outbound connection to %s to 15001 with its original destination", async (host) => {
      expect(await t().connect(t().pod, APP, host, 9000)).toMatch(new RegExp(`^ztunnel 15001 ${host} 9000 `));
    });

    it.each([[ADDR.remoteV4], [ADDR.remoteV6]])("lets ztunnel's own marked connection to %s go out untouched", async (host) => {
      expect(await t().connect(t().pod, ROOT, host, 9000, undefined, { mark: ZTUNNEL_MARK })).toMatch(/^peer 9000 /);
    });

    it.each([[ADDR.podV4], [ADDR.podV6]])("lets ztunnel's own marked connection to the app at %s through", async (host) => {
      expect(await t().connect(t().pod, ROOT, host, 8080, undefined, { mark: ZTUNNEL_MARK })).toMatch(/^app 8080 /);
    });

    it.each([
      [ADDR.peerV4, 'udp'],
      [ADDR.peerV6, 'udp'],
      [ADDR.peerV4, 'tcp'],
      [ADDR.peerV6, 'tcp'],
    ])('captures DNS to %s over %s on 15053', async (host, proto) => {
      const answer = proto === 'udp' ? await t().udp(t().pod, APP, host, 53) : await t().connect(t().pod, APP, host, 53);
      expect(answer).toMatch(proto === 'udp' ? /^ztunnel-dns 15053$/ : new RegExp(`^ztunnel 15053 ${host} 53 `));
    });

    it("lets the kubelet's probe, SNATed to 169.254.7.127 by ambient-host on the node, reach the app directly", async () => {
      const add = await t().meshcap(['ambient-host', '--ipv6', 'on', '--host-probe-snat-v6', PROBE_V6, '--add-pod-ip', `${ADDR.podV4},${ADDR.podV6}`], t().peer);
      expect(add.exitCode).toBe(0);
      expect(await t().connect(t().peer, ROOT, ADDR.podV4, 8080)).toBe(`app 8080 ${ADDR.podV4} 8080 ${PROBE_V4}`);
      expect(await t().connect(t().peer, ROOT, ADDR.podV6, 8080)).toBe(`app 8080 ${ADDR.podV6} 8080 ${PROBE_V6}`);
      const remove = await t().meshcap(['ambient-host', '--ipv6', 'on', '--host-probe-snat-v6', PROBE_V6, '--remove-pod-ip', `${ADDR.podV4},${ADDR.podV6}`], t().peer);
      expect(remove.exitCode).toBe(0);
      // Out of the set, the node's connection is an ordinary inbound one again.
      expect(await t().connect(t().peer, ROOT, ADDR.podV4, 8080)).toMatch(/^ztunnel 15006 /);
      const clean = await t().meshcap(['ambient-host', '--ipv6', 'on', '--cleanup-only'], t().peer);
      expect(clean.exitCode).toBe(0);
      expect((await t().peer.run('ipset', ['list', '-n'])).stdout.trim()).toBe('');
      expect(await saveOf(t().peer, 'ipv4', 'nft')).not.toContain('ISTIO_');
    });

    it('re-applying changes nothing', async () => {
      const v4 = await saveOf(t().pod, 'ipv4', 'nft');
      const r = await t().meshcap(args);
      expect(r.exitCode).toBe(0);
      expect(r.stderr).toContain('"action":"unchanged"');
      expect(await saveOf(t().pod, 'ipv4', 'nft')).toBe(v4);
    });

    it('cleanup leaves the foreign rules as they were and removes the ip rules and routes', async () => {
      const r = await t().meshcap([...args, '--cleanup-only']);
      expect(r.exitCode).toBe(0);
      expect(saveTables(await saveOf(t().pod, 'ipv4', 'nft'))).toEqual(saveTables(before!.v4));
      expect(saveTables(await saveOf(t().pod, 'ipv6', 'nft'))).toEqual(saveTables(before!.v6));
      for (const fam of ['-4', '-6']) {
        expect((await t().pod.run('ip', [fam, 'rule', 'show'])).stdout).not.toContain('lookup 100');
        expect((await t().pod.run('ip', [fam, 'route', 'show', 'table', '100'])).stdout).toBe('');
      }
      // With the rules gone, DNS reaches the real server again.
      expect(await t().udp(t().pod, APP, ADDR.peerV4, 53)).toBe('peer-dns 53');
    });
  });
}

describe('ambient with DNS capture off', () => {
  let topo: PodTopology | undefined;
  const t = () => topo as PodTopology;
  beforeAll(async () => {
    topo = await PodTopology.create();
    await t().serve(t().pod, ROOT, 'ztunnel', [15001, 15006, 15008, 15053]);
    await t().serve(t().pod, ROOT, 'ztunnel-dns', [15053], { udp: true });
    await t().serve(t().peer, ROOT, 'peer', [53]);
    await t().serve(t().peer, ROOT, 'peer-dns', [53], { udp: true });
    const r = await t().meshcap(['ambient', '--inbound', 'redirect', '--redirect-dns', '--pod-dns-capture', 'false', '--ipv6', 'on']);
    expect(r.exitCode).toBe(0);
  });
  afterAll(async () => {
    await topo?.destroy();
  });

  it('lets UDP DNS reach the real server', async () => {
    expect(await t().udp(t().pod, APP, ADDR.peerV4, 53)).toBe('peer-dns 53');
  });

  it('sends TCP to port 53 to ztunnel outbound like any other TCP, not to the DNS proxy', async () => {
    expect(await t().connect(t().pod, APP, ADDR.peerV6, 53)).toMatch(new RegExp(`^ztunnel 15001 ${ADDR.peerV6} 53 `));
  });
});

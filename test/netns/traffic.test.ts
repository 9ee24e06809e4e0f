import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { ADDR, APP, PROXY, PodTopology } from '../helpers/topology.js';

requireRoot();

/**
 * Real TCP through real rules: a pod namespace with a test proxy (UID 1337) on 15001/15006 that answers
 * with the original destination it saw, an app on 8080/8081, health listeners on 15020/15021/15090, and a
 * peer namespace that answers on 9000/9001 on all its addresses. Each answer names the listener that took
 * the connection: "NAME PORT ORIG_IP ORIG_PORT PEER".
 */
interface Scenario {
  readonly title: string;
  readonly args: readonly string[];
  readonly tproxy?: boolean;
}

async function startPod(t: PodTopology, s: Scenario): Promise<void> {
  const proxy = s.tproxy ? { ...PROXY, caps: ['net_admin'] } : PROXY;
  await t.serve(t.pod, proxy, 'proxy', [15001, 15006], { transparent: s.tproxy ?? false });
  await t.serve(t.pod, APP, 'app', [8080, 8081]);
  await t.serve(t.pod, APP, 'health', [15020, 15021, 15090]);
  await t.serve(t.peer, APP, 'peer', [9000, 9001]);
  const r = await t.meshcap(s.args);
  expect(r.stderr).not.toContain('"level":50');
  expect(r.exitCode).toBe(0);
}

function withTopology(s: Scenario, body: (t: () => PodTopology) => void): void {
  describe(s.title, () => {
    let topo: PodTopology | undefined;
    beforeAll(async () => {
      topo = await PodTopology.create();
      await startPod(topo, s);
    });
    afterAll(async () => {
      await topo?.destroy();
    });
    body(() => topo as PodTopology);
  });
}

for (const backend of ['nft', 'legacy'] as const) {
  const defaults: Scenario = { title: `istio-init defaults, IPv4 and IPv6 (${backend})`, args: [...ISTIO_INIT_ARGS, '--ipv6', 'on', '--force-iptables-binary', backend] };
  withTopology(defaults, (t) => {
    it.each([
      [ADDR.remoteV4, `proxy 15001 ${ADDR.remoteV4} 9000`],
      [ADDR.remoteV6, `proxy 15001 ${ADDR.remoteV6} 9000`],
    ])("sends the app's outbound connection to %s to 15001 with its original destination", async (host, expected) => {
      expect(await t().connect(t().pod, APP, host, 9000)).toMatch(new RegExp(`^${expected} `));
    });

    it.each([[ADDR.remoteV4], [ADDR.remoteV6]])("lets the proxy's own connection to %s go straight out", async (host) => {
      expect(await t().connect(t().pod, PROXY, host, 9000)).toMatch(/^peer 9000 /);
    });

    it.each([
      [ADDR.podV4, `proxy 15006 ${ADDR.podV4} 8080`],
      [ADDR.podV6, `proxy 15006 ${ADDR.podV6} 8080`],
    ])('sends inbound connections to %s:8080 to 15006 with their original destination', async (host, expected) => {
      expect(await t().connect(t().peer, APP, host, 8080)).toMatch(new RegExp(`^${expected} `));
    });

    it.each([
      [ADDR.podV4, 15021],
      [ADDR.podV4, 15020],
      [ADDR.podV4, 15090],
      [ADDR.podV6, 15021],
    ])('lets inbound %s:%i (excluded) reach its listener directly', async (host, port) => {
      expect(await t().connect(t().peer, APP, host, port)).toMatch(new RegExp(`^health ${port} `));
    });

    it.each([
      [ADDR.podV4, '127.0.0.6'],
      [ADDR.podV6, '::6'],
    ])("lets the proxy's inbound passthrough to %s from %s reach the app", async (host, source) => {
      expect(await t().connect(t().pod, PROXY, host, 8080, source)).toMatch(/^app 8080 /);
    });

    it('sends the proxy reaching its own pod IP over lo to inbound capture', async () => {
      expect(await t().connect(t().pod, PROXY, ADDR.podV4, 8080)).toMatch(new RegExp(`^proxy 15006 ${ADDR.podV4} 8080 `));
    });

    it.each([['127.0.0.1'], ['::1'], [ADDR.podV4]])("does not capture the app's connection to %s", async (host) => {
      expect(await t().connect(t().pod, APP, host, 8080)).toMatch(/^app 8080 /);
    });
  });

  const tproxy: Scenario = {
    title: `TPROXY inbound, IPv4 and IPv6 (${backend})`,
    args: ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-i', '*', '-b', '*', '-d', '15090,15021,15020', '--ipv6', 'on', '--force-iptables-binary', backend],
    tproxy: true,
  };
  withTopology(tproxy, (t) => {
    it.each([
      [ADDR.podV4, `proxy 15006 ${ADDR.podV4} 8080 ${ADDR.peerV4}`],
      [ADDR.podV6, `proxy 15006 ${ADDR.podV6} 8080 ${ADDR.peerV6}`],
    ])('delivers inbound %s:8080 to the transparent listener on 15006, source and destination kept', async (host, expected) => {
      expect(await t().connect(t().peer, APP, host, 8080)).toBe(expected);
    });

    it.each([[ADDR.podV4], [ADDR.podV6]])('lets inbound %s:15021 reach the health listener', async (host) => {
      expect(await t().connect(t().peer, APP, host, 15021)).toMatch(/^health 15021 /);
    });

    it("still redirects the app's outbound traffic to 15001", async () => {
      expect(await t().connect(t().pod, APP, ADDR.remoteV4, 9000)).toMatch(new RegExp(`^proxy 15001 ${ADDR.remoteV4} 9000 `));
    });

    it("lets the proxy's own outbound connection go straight out", async () => {
      expect(await t().connect(t().pod, PROXY, ADDR.remoteV6, 9000)).toMatch(/^peer 9000 /);
    });
  });
}

withTopology(
  {
    title: 'outbound CIDR include/exclude lists (-i/-x), IPv4 and IPv6',
    args: ['-p', '15001', '-z', '15006', '-u', '1337', '-i', '203.0.113.0/24,2001:db8:2::/48', '-x', '203.0.113.128/25', '-b', '*', '-d', '15021', '--ipv6', 'on'],
  },
  (t) => {
    it.each([
      [ADDR.remoteV4, true],
      [ADDR.remoteV4Excluded, false],
      [ADDR.otherV4, false],
      [ADDR.remoteV6, true],
      [ADDR.otherV6, false],
    ])('app → %s captured: %s', async (host, captured) => {
      const answer = await t().connect(t().pod, APP, host, 9000);
      expect(answer).toMatch(captured ? new RegExp(`^proxy 15001 ${host} 9000 `) : /^peer 9000 /);
    });
  },
);

withTopology(
  {
    title: 'outbound port lists (-q/-o) and an inbound port list (-b)',
    args: ['-p', '15001', '-z', '15006', '-u', '1337', '-i', '203.0.113.0/24', '-q', '9001', '-o', '9000', '-b', '8080', '--ipv6', 'off'],
  },
  (t) => {
    it.each([
      [ADDR.otherV4, 9001, true],
      [ADDR.otherV4, 9000, false],
      [ADDR.remoteV4, 9000, false],
      [ADDR.remoteV4, 9001, true],
    ])('app → %s:%i captured: %s', async (host, port, captured) => {
      const answer = await t().connect(t().pod, APP, host, port);
      expect(answer).toMatch(captured ? new RegExp(`^proxy 15001 ${host} ${port} `) : new RegExp(`^peer ${port} `));
    });

    it('captures inbound 8080, which is listed', async () => {
      expect(await t().connect(t().peer, APP, ADDR.podV4, 8080)).toMatch(/^proxy 15006 /);
    });

    it('leaves inbound 8081, which is not listed, to the app', async () => {
      expect(await t().connect(t().peer, APP, ADDR.podV4, 8081)).toMatch(/^app 8081 /);
    });
  },
);

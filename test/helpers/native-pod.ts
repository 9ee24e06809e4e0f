import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { requireRoot } from './netns.js';
import { Holders, settleIpv6 } from './precheck.js';
import { PodTopology } from './topology.js';
import { ISTIO_INIT_ARGS } from './plan.js';

/** The precheck-nft suites' pod: native nftables rules (`--native-nftables`), a proxy, the agent and the app. */
export const ENVOY_SOCKETS = ['tcp:0.0.0.0:15001', 'tcp:[::]:15001', 'tcp:0.0.0.0:15006', 'tcp:[::]:15006', 'tcp:127.0.0.1:15000', 'tcp:0.0.0.0:15021', 'tcp:0.0.0.0:15090'];
export const APP = { uid: 1000, gid: 1000, comm: 'app' };
export const TPROXY_ARGS = ISTIO_INIT_ARGS.map((a) => (a === 'REDIRECT' ? 'TPROXY' : a));

/** One pod namespace with the native rules of `args`, the proxy (`envoy`), the agent and the app. */
export function useNativePod(args: readonly string[], envoy: { uid: number; gid: number }) {
  const holders = new Holders();
  const extras = new Holders();
  const pod = {
    t: undefined as PodTopology | undefined,
    extras,
    async apply(more: readonly string[] = []): Promise<void> {
      const r = await pod.topology().meshcap(['--native-nftables', ...args, '--ipv6', 'on', ...more]);
      expect(r.exitCode, r.stderr).toBe(0);
    },
    async startProxy(): Promise<void> {
      const ns = pod.topology().pod;
      await holders.start(ns, { ...envoy, comm: 'envoy' }, ENVOY_SOCKETS);
      await holders.start(ns, { uid: 1337, gid: 1337, comm: 'pilot-agent' }, ['tcp:0.0.0.0:15020']);
      await holders.start(ns, APP, ['tcp:0.0.0.0:8080', 'tcp:[::]:8080']);
    },
    stopProxy: () => holders.stopAll(),
    topology(): PodTopology {
      if (pod.t === undefined) throw new Error('no pod topology');
      return pod.t;
    },
  };
  beforeAll(async () => {
    requireRoot();
    pod.t = await PodTopology.create();
    await settleIpv6(pod.t.pod);
    await pod.apply();
    await pod.startProxy();
  });
  afterEach(() => extras.stopAll());
  afterAll(async () => {
    await extras.stopAll();
    await holders.stopAll();
    await pod.t?.destroy();
  });
  return pod;
}


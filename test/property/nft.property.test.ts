import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCommand } from '../../src/commands/load.js';
import { renderNftApply } from '../../src/render/nft-apply.js';
import { buildNftTables, renderNftIstio } from '../../src/render/nft-transaction.js';
import { fakeHost } from '../helpers/cli.js';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { ambientConfig, SCALE, SEED, sidecarConfig, type Generated } from './arbitraries.js';

requireRoot();

/**
 * Seeded random configs in native nftables mode (sidecar, ambient redirect, node side) → the transaction
 * meshcap applies and Istio's text for it must both be accepted by the real `nft -c -f -` (check only, in a
 * throwaway namespace). Replay a failure with MESHCAP_PROPERTY_SEED.
 */
const CONFIGS = Math.round(300 * SCALE);
const octet = fc.integer({ min: 0, max: 255 });

/** A plain sidecar config in native mode, for the fixed cases. */
const nftSidecarBase: Record<string, string> = { nativeNftables: 'true', ipv6: 'off', inboundPorts: '*', outboundInclude: '*', dnsServers: '', resolvConf: '/dev/null' };
const nftSidecar = sidecarConfig.map((g) => ({ ...g, flags: { ...g.flags, nativeNftables: 'true' } }));
const nftAmbient = ambientConfig.map((g) => ({ ...g, flags: { ...g.flags, inbound: 'redirect', nativeNftables: 'true' } }));
const nftHost: fc.Arbitrary<{ command: 'ambient-host'; flags: Record<string, string> }> = fc
  .record({
    ipv6: fc.constantFrom('on', 'off'),
    kubeletUid: fc.integer({ min: 0, max: 4294967294 }).map(String),
    addPodIp: fc.uniqueArray(fc.tuple(octet, octet).map(([c, d]) => `10.244.${c}.${d}`), { maxLength: 4 }).map((l) => l.join(',')),
    removePodIp: fc.uniqueArray(fc.tuple(octet, octet).map(([c, d]) => `10.245.${c}.${d}`), { maxLength: 2 }).map((l) => l.join(',')),
  })
  .map((flags) => ({ command: 'ambient-host' as const, flags: { ...flags, nativeNftables: 'true', dryRun: 'true' } }));

function transactions(g: Generated | { command: 'ambient-host'; flags: Record<string, string> }): { applied: string; istio: string } {
  const loaded = loadCommand(g.command, g.flags, {}, fakeHost());
  if (loaded.nft === undefined) throw new Error('not in native nftables mode');
  const blocks = buildNftTables(loaded.plan, loaded.nft);
  return { applied: renderNftApply(loaded.nft.mode, loaded.plan, blocks), istio: renderNftIstio(blocks) };
}

describe(`property: nft -c accepts every native nftables transaction (seed ${SEED})`, () => {
  let ns: Netns | undefined;
  beforeAll(async () => {
    ns = await createNetns('mcnftprop');
  });
  afterAll(async () => {
    await deleteNetns(ns);
  });

  it('rejects a transaction that jumps to a missing chain, so the check can fail', async () => {
    const r = await ns!.tryRun('nft', ['-c', '-f', '-'], { input: 'add table inet t\nadd chain inet t c\nadd rule inet t c jump nowhere\n' });
    expect(r.exitCode).not.toBe(0);
  });

  /** nft itself decides whether an interface name reads as a name when unquoted (as Istio writes it). */
  async function readsUnquoted(name: string): Promise<boolean> {
    const r = await ns!.tryRun('nft', ['-c', '-f', '-'], { input: `add table inet t\nadd chain inet t c\nadd rule inet t c iifname ${name} counter\n` });
    return r.exitCode === 0;
  }

  it('applies an interface named like an nft keyword, which breaks Istio\'s unquoted text', async () => {
    const { applied, istio } = transactions({ command: 'sidecar', flags: { ...nftSidecarBase, excludeInterfaces: 'xt' } });
    expect((await ns!.tryRun('nft', ['-c', '-f', '-'], { input: applied })).exitCode).toBe(0);
    expect((await ns!.tryRun('nft', ['-c', '-f', '-'], { input: istio })).exitCode).not.toBe(0);
  });

  it(`accepts the applied text of ${CONFIGS} random configs, and Istio's text unless nft cannot read an interface name unquoted`, async () => {
    let checked = 0;
    let keywordNames = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(nftSidecar, nftAmbient, nftHost), async (g) => {
        const { applied, istio } = transactions(g);
        const a = await ns!.tryRun('nft', ['-c', '-f', '-'], { input: applied });
        if (a.exitCode !== 0) throw new Error(`nft -c rejected the applied transaction:\n${a.stderr}\n${applied}`);
        if (g.command !== 'ambient-host') {
          const i = await ns!.tryRun('nft', ['-c', '-f', '-'], { input: istio });
          if (i.exitCode !== 0) {
            const names = ['excludeInterfaces', 'kubeVirtInterfaces', 'virtualInterfaces'].flatMap((k) => ((g.flags as Record<string, string | undefined>)[k] ?? '').split(',')).filter(Boolean);
            const unreadable = (await Promise.all(names.map(readsUnquoted))).some((ok) => !ok);
            if (!unreadable) throw new Error(`nft -c rejected Istio's text:\n${i.stderr}\n${istio}`);
            keywordNames++;
          }
        }
        checked++;
      }),
      { seed: SEED, numRuns: CONFIGS },
    );
    console.log(`nft property: ${checked} configs (${keywordNames} with an interface named like an nft keyword), seed ${SEED}`);
    expect(checked).toBe(CONFIGS);
  });
});

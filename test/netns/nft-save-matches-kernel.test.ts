import { describe, expect, it } from 'vitest';
import { NFT_AMBIENT_CASES, NFT_SIDECAR_CASES } from '../conformance/nft-cases.js';
import { requireRoot, withNetns } from '../helpers/netns.js';
import { meshcapWithGroups, nftListing, THROWAWAY_GROUPS } from '../helpers/nft.js';

requireRoot();

/**
 * Dry-run is the truth for native nftables: for every golden config, the save-format dry-run equals what the
 * machine's `nft -s list ruleset` prints after meshcap applied the same config into an empty namespace. The
 * four group-name cases run with throwaway groups (a private /etc/group), so all 42 load.
 */
const cases = [...NFT_SIDECAR_CASES.map((c) => ({ ...c, name: `sidecar/${c.golden}` })), ...NFT_AMBIENT_CASES.map((c) => ({ ...c, name: `ambient/${c.golden}` }))];

describe('the nft save-format dry-run equals the kernel listing after the real apply', () => {
  it.each(cases)('$name', async (c) => {
    const env = { ...c.env };
    const groups = c.appliable === false ? THROWAWAY_GROUPS : undefined;
    const dry = await meshcapWithGroups(c.argv, env, groups);
    expect(dry.exitCode).toBe(0);
    expect(dry.stdout).toMatch(/^table inet istio-/);
    await withNetns(async (ns) => {
      await ns.run('ip', ['link', 'set', 'lo', 'up']);
      const applied = await meshcapWithGroups([...c.argv.filter((a) => a !== '-n'), '--netns', ns.path], env, groups);
      expect(applied.stderr).not.toContain('"level":50');
      expect(applied.exitCode).toBe(0);
      expect(await nftListing(ns)).toBe(dry.stdout);
    });
  });
});

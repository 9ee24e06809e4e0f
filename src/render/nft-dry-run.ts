import type { Plan } from '../model/plan.js';
import { probeSets, renderNftCleanup } from './nft-apply.js';
import { renderNftListing } from './nft-listing.js';
import { buildNftTables, renderNftIstio, type NftRenderOptions } from './nft-transaction.js';

/**
 * Native nftables mode's two dry-run texts, made on demand: Istio's transaction text and what
 * `nft -s list ruleset` would print (the node side lists its probe sets too). After a cleanup an empty
 * namespace holds none of our tables: the save format prints nothing.
 */
export function nftDryRunTexts(plan: Plan, nft: NftRenderOptions, cleanupOnly: boolean): { istio: () => string; save: () => string } {
  if (cleanupOnly) return { istio: () => renderNftCleanup(nft.mode), save: () => '' };
  const blocks = buildNftTables(plan, nft);
  return { istio: () => renderNftIstio(blocks), save: () => renderNftListing(blocks, nft.mode === 'ambient-host' ? probeSets(plan) : []) };
}

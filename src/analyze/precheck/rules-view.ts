import { isOwnedChain, isRecordChain, recordChainFor } from '../../model/ownership.js';
import { Chain } from '../../model/names.js';
import { isBuiltinChain } from '../../model/chains.js';
import { formatSavedMark } from '../../render/spec.js';
import { detectLayout } from '../../inspect/capture-layout.js';
import type { BackendRules, NamespaceRules } from '../../inspect/namespace-rules.js';
import type { NftTable } from '../../inspect/namespace-rules.js';
import { targetName } from '../../inspect/targets.js';
import type { ParsedRule } from '../../inspect/types.js';
import { chainIn, listSources, nativeHook, type RuleSource } from './rule-sources.js';

/**
 * What the capture rules of a namespace say, read from every source (each iptables backend and family, and
 * the native nft tables): pure questions over the parsed rules.
 */

/**
 * Every rule of one source that takes part in evaluation for its family: the ownership records never do, nor
 * does a native `ip …` / `meta nfproto ipv4` rule of an `inet` table for IPv6 packets (or the reverse).
 */
export function liveRules(b: RuleSource): ParsedRule[] {
  const otherFamily = (r: ParsedRule) => r.match.some((c) => c.k === 'nfproto' && c.family !== b.family);
  return b.tables.flatMap((t) => t.rules).filter((r) => !isRecordChain(r.chain) && !otherFamily(r));
}

/** A rule's `-j`/`-g` names one of our chains (never a record). */
export const jumpsToOurs = (r: ParsedRule) => {
  const t = targetName(r.target);
  return t !== undefined && isOwnedChain(t) && !isRecordChain(t);
};

/** A native rule's verdict jumps to a chain of its own table (every chain of a mesh table is ours). */
const jumpsInTable = (r: ParsedRule) => (r.target.k === 'jump' || r.target.k === 'goto') && !['ACCEPT', 'RETURN', 'DROP'].includes(r.target.chain);

/** The hook a rule's chain is entered on: an iptables builtin chain's name, a native base chain's hook. */
function hookOf(b: RuleSource, r: ParsedRule): string | undefined {
  if (b.backend === 'native') return nativeHook(b, r);
  return isBuiltinChain(r.chain, r.table) ? r.chain : undefined;
}

/** Rules in builtin (native: base) nat/mangle chains that jump into our chains: the capture's entry points. */
export function captureJumps(b: RuleSource): ParsedRule[] {
  const ours = b.backend === 'native' ? jumpsInTable : jumpsToOurs;
  return liveRules(b).filter((r) => (r.table === 'nat' || r.table === 'mangle') && hookOf(b, r) !== undefined && ours(r));
}

export function hasIstioChains(b: BackendRules): boolean {
  return b.tables.some((t) => t.chains.some((c) => isOwnedChain(c.name)));
}

/** Native nftables tables of a mesh (`inet istio-proxy-nat`, …). */
export function meshNftTables(rules: NamespaceRules): NftTable[] {
  return rules.nftTables.filter((t) => t.name.startsWith('istio-'));
}

/** Ambient's in-pod rules in some source (inspect's detectLayout, as trace reads it; native tables alike). */
export function isAmbient(rules: NamespaceRules): boolean {
  return listSources(rules).some((b) => detectLayout(b.tables) === 'ambient');
}

const entersInbound = (b: RuleSource, r: ParsedRule) => hookOf(b, r) === 'PREROUTING' && targetName(r.target) === chainIn(b, Chain.inbound);

/** The sidecar's inbound capture: PREROUTING jumps into ISTIO_INBOUND (nat in REDIRECT mode, mangle in TPROXY mode). */
export function inboundEntry(b: RuleSource): ParsedRule | undefined {
  return captureJumps(b).find((r) => entersInbound(b, r));
}

/** Sidecar TPROXY mode: mangle PREROUTING jumps into ISTIO_INBOUND (native: the mangle table's prerouting into istio-inbound). */
export function isTproxySidecar(b: RuleSource): boolean {
  return captureJumps(b).some((r) => r.table === 'mangle' && entersInbound(b, r));
}

/** Owner ids the outbound chain exempts (uid or gid owner matches in ISTIO_OUTPUT or native istio-output, negated or not). */
export function exemptOwners(rules: NamespaceRules, kind: 'uid' | 'gid'): Set<number> {
  const ids = listSources(rules).flatMap((b) =>
    liveRules(b)
      .filter((r) => r.chain === chainIn(b, Chain.output))
      .flatMap((r) => r.match.flatMap((c) => (c.k === 'owner' && c.kind === kind && c.id.id !== undefined ? [c.id.id] : []))),
  );
  return new Set(ids);
}

/** Ports the rules send captured connections to: REDIRECT and TPROXY targets in our chains (every chain of a native mesh table). */
export function redirectPorts(rules: NamespaceRules): Set<number> {
  const ports = listSources(rules).flatMap((b) =>
    liveRules(b)
      .filter((r) => b.backend === 'native' || isOwnedChain(r.chain))
      .flatMap((r) => (r.target.k === 'redirect' || r.target.k === 'tproxy' ? [r.target.port] : [])),
  );
  return new Set(ports.filter((p) => p > 0));
}

/** The TPROXY marks of one source, as `[mark, mask]` and as iptables-save prints them (nft: `tproxy … meta mark set M accept`). */
export function tproxyMarks(b: RuleSource): { text: string; mark: number; mask: number }[] {
  return liveRules(b).flatMap((r) => (r.table === 'mangle' && r.target.k === 'tproxy' ? [{ text: formatSavedMark(r.target.mark, r.target.mask), mark: r.target.mark, mask: r.target.mask }] : []));
}

/** The ownership records of a chain: rules meshcap put in a builtin chain (ISTIO_OWNED_<chain>). */
export function recordedSpecs(b: BackendRules, table: string, chain: string): Set<string> {
  const record = recordChainFor(chain);
  return new Set(b.tables.flatMap((t) => t.rules).filter((r) => r.table === table && r.chain === record).map((r) => r.spec));
}

import { isOwnedChain, isRecordChain, recordChainFor } from '../../model/ownership.js';
import { Chain } from '../../model/names.js';
import { isBuiltinChain } from '../../model/chains.js';
import { formatSavedMark } from '../../render/spec.js';
import { detectLayout } from '../../inspect/capture-layout.js';
import type { BackendRules, NamespaceRules } from '../../inspect/namespace-rules.js';
import type { NftTable } from '../../inspect/nft-tables.js';
import { targetName } from '../../inspect/targets.js';
import type { ParsedRule } from '../../inspect/types.js';

/** What the capture rules of a namespace say, read from every backend: pure questions over the parsed rules. */

/** Every rule of one backend and family that takes part in evaluation (the ownership records never do). */
export function liveRules(b: BackendRules): ParsedRule[] {
  return b.tables.flatMap((t) => t.rules).filter((r) => !isRecordChain(r.chain));
}

/** A rule's `-j`/`-g` names one of our chains (never a record). */
export const jumpsToOurs = (r: ParsedRule) => {
  const t = targetName(r.target);
  return t !== undefined && isOwnedChain(t) && !isRecordChain(t);
};

/** Rules in builtin nat/mangle chains that jump into our chains: the capture's entry points. */
export function captureJumps(b: BackendRules): ParsedRule[] {
  return liveRules(b).filter((r) => (r.table === 'nat' || r.table === 'mangle') && isBuiltinChain(r.chain, r.table) && jumpsToOurs(r));
}

export function hasIstioChains(b: BackendRules): boolean {
  return b.tables.some((t) => t.chains.some((c) => isOwnedChain(c.name)));
}

/** Native nftables tables of a mesh (`inet istio-proxy-nat`, …). */
export function meshNftTables(rules: NamespaceRules): NftTable[] {
  return rules.nftTables.filter((t) => t.name.startsWith('istio-'));
}

/** Ambient's in-pod rules in some backend (inspect's detectLayout, as trace reads it). */
export function isAmbient(rules: NamespaceRules): boolean {
  return rules.iptables.some((b) => detectLayout(b.tables) === 'ambient');
}

const entersInbound = (r: ParsedRule) => r.chain === 'PREROUTING' && targetName(r.target) === Chain.inbound;

/** The sidecar's inbound capture: PREROUTING jumps into ISTIO_INBOUND (nat in REDIRECT mode, mangle in TPROXY mode). */
export function inboundEntry(b: BackendRules): ParsedRule | undefined {
  return captureJumps(b).find(entersInbound);
}

/** Sidecar TPROXY mode: mangle PREROUTING jumps into ISTIO_INBOUND. */
export function isTproxySidecar(b: BackendRules): boolean {
  return captureJumps(b).some((r) => r.table === 'mangle' && entersInbound(r));
}

/** Owner ids the outbound chain exempts (uid or gid owner matches in ISTIO_OUTPUT, negated or not). */
export function exemptOwners(rules: NamespaceRules, kind: 'uid' | 'gid'): Set<number> {
  const ids = rules.iptables.flatMap((b) =>
    liveRules(b)
      .filter((r) => r.chain === 'ISTIO_OUTPUT')
      .flatMap((r) => r.match.flatMap((c) => (c.k === 'owner' && c.kind === kind && c.id.id !== undefined ? [c.id.id] : []))),
  );
  return new Set(ids);
}

/** Ports the rules send captured connections to: REDIRECT and TPROXY targets in our chains. */
export function redirectPorts(rules: NamespaceRules): Set<number> {
  const ports = rules.iptables.flatMap((b) =>
    liveRules(b)
      .filter((r) => isOwnedChain(r.chain))
      .flatMap((r) => (r.target.k === 'redirect' || r.target.k === 'tproxy' ? [r.target.port] : [])),
  );
  return new Set(ports.filter((p) => p > 0));
}

/** The TPROXY marks of one backend and family, as `[mark, mask]` and as iptables-save prints them. */
export function tproxyMarks(b: BackendRules): { text: string; mark: number; mask: number }[] {
  return liveRules(b).flatMap((r) => (r.table === 'mangle' && r.target.k === 'tproxy' ? [{ text: formatSavedMark(r.target.mark, r.target.mask), mark: r.target.mark, mask: r.target.mask }] : []));
}

/** The ownership records of a chain: rules meshcap put in a builtin chain (ISTIO_OWNED_<chain>). */
export function recordedSpecs(b: BackendRules, table: string, chain: string): Set<string> {
  const record = recordChainFor(chain);
  return new Set(b.tables.flatMap((t) => t.rules).filter((r) => r.table === table && r.chain === record).map((r) => r.spec));
}

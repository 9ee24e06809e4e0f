import { CommandError } from '../../errors.js';
import type { Family } from '../../model/cidr.js';
import { nftChainName } from '../../model/nft/layout.js';
import type { BackendRules, NamespaceRules } from '../../inspect/namespace-rules.js';
import type { ParsedRule, ParsedTable } from '../../inspect/types.js';

/**
 * Where precheck's rule questions are asked: one family's rules of one iptables backend, or the native nft
 * tables of a mesh (`inet istio-proxy-*`, `inet istio-ambient-*`) as the one reader parsed them for that family.
 */
export interface NativeRules {
  readonly backend: 'native';
  readonly family: Family;
  readonly tables: readonly ParsedTable[];
}

export type RuleSource = BackendRules | NativeRules;

const FAMILIES: readonly Family[] = ['ipv4', 'ipv6'];

/** A native table of a mesh: its label is `<nft family> istio-…`. */
const isMeshTable = (t: ParsedTable) => t.label?.split(' ')[1]?.startsWith('istio-') === true;

/** The native mesh tables, one source per family they serve (an `inet` table serves both). */
export function listNativeSources(rules: NamespaceRules): NativeRules[] {
  const mesh = rules.nftRules?.tables.filter(isMeshTable) ?? [];
  return FAMILIES.flatMap((family) => {
    const tables = mesh.filter((t) => t.family === family);
    return tables.length === 0 ? [] : [{ backend: 'native' as const, family, tables }];
  });
}

/** Every source of capture rules: each iptables backend and family that could be read, then the native tables. */
export function listSources(rules: NamespaceRules): RuleSource[] {
  return [...rules.iptables, ...listNativeSources(rules)];
}

/** A model chain (`ISTIO_INBOUND`) as this source names it (`istio-inbound` in native tables). */
export function chainIn(s: RuleSource, chain: string): string {
  return s.backend === 'native' ? nftChainName('sidecar', chain) : chain;
}

/** The hook a native rule's chain is entered on (`PREROUTING`), when that chain is a base chain. */
export function nativeHook(s: NativeRules, r: ParsedRule): string | undefined {
  const chain = s.tables.find((t) => t.table === r.table && t.label !== undefined && t.rules.includes(r))?.chains.find((c) => c.name === r.chain);
  return chain?.base?.hook.toUpperCase();
}

/**
 * The tables the kernel runs for a native source's family: the iptables backend a walk of that family covers
 * (if any holds rules) before the native tables, as trace passes them; and the native sets' members.
 */
export function walkTables(rules: NamespaceRules, s: RuleSource): readonly ParsedTable[] {
  if (s.backend !== 'native') return s.tables;
  const walked = rules.walked.get(s.family);
  const iptables = walked === undefined || walked instanceof CommandError ? [] : walked.rules.tables.filter((t) => t.family === s.family);
  return [...iptables, ...s.tables];
}

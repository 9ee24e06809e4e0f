import { isOwnedChain, recordChainFor } from '../model/ownership.js';
import type { Table } from '../model/rule.js';
import { isBuiltinChain } from '../model/chains.js';
import { parseRuleSpec, tokenize } from '../inspect/rule-spec.js';
import { parseSaveText } from '../inspect/save-text.js';
import { targetName } from '../inspect/targets.js';

/** One rule as iptables-save prints it: its chain and its canonical match/target tokens. */
export interface SavedRule {
  readonly chain: string;
  readonly spec: string;
}

export interface TableState {
  readonly table: Table;
  /** Every chain the table declares (builtin and user), in save order. */
  readonly chains: readonly string[];
  /** Every rule in save order (grouped by chain, in chain order). */
  readonly rules: readonly SavedRule[];
}

export type FamilyState = ReadonlyMap<Table, TableState>;

/**
 * One family's iptables-save output as tables, chains and rules, read by the one save-text parser
 * (src/inspect): comment lines and tables meshcap never touches are skipped; rule text is re-joined token by
 * token, so spacing never matters.
 */
export function parseSave(text: string): Map<Table, TableState> {
  const out = new Map<Table, TableState>();
  for (const t of parseSaveText(text).tables) {
    out.set(t.table, { table: t.table, chains: t.chains.map((c) => c.name), rules: t.rules.map((r) => ({ chain: r.chain, spec: r.spec })) });
  }
  return out;
}

const RECORD_PREFIX = recordChainFor('');

/** How to tell ours from others' in one family: which chains are ours, and the builtin-chain rules we want. */
export interface Ownership {
  readonly owns: (chain: string) => boolean;
  /** `chain spec` of the rules the wanted config puts in builtin chains. */
  readonly wanted: ReadonlySet<string>;
}

/** In a pod namespace every ISTIO_* chain is ours; with `exact`, only those chains (the node's namespace). */
export function ownershipOf(exact: readonly string[] | undefined, wanted: ReadonlySet<string> = new Set()): Ownership {
  const owns = exact === undefined ? isOwnedChain : (c: string) => exact.includes(c);
  return { owns, wanted };
}

/** The chain (or target) a rule's `-j`/`-g` names, read by the one parser. */
export function targetOf(spec: string): string | undefined {
  return targetName(parseRuleSpec(tokenize(spec)).target);
}

/** What of a table is ours: ISTIO_* chains with their rules, and our rules in builtin chains. */
export interface OwnedTable {
  readonly table: Table;
  readonly chains: ReadonlyMap<string, readonly string[]>;
  /** builtin chain → our rules there, in order. */
  readonly builtin: ReadonlyMap<string, readonly string[]>;
}

/**
 * Picks out our part of a table: every ISTIO_* chain, and in builtin chains every rule that jumps into an
 * ISTIO_* chain, or that our ownership record (`ISTIO_OWNED_<chain>`) lists — as many times as it lists it —
 * or that is exactly a rule the wanted config puts there (Istio's own look-alike rules).
 */
export function ownedPart(state: TableState, ownership: Ownership): OwnedTable {
  const { owns, wanted } = ownership;
  const chains = new Map<string, string[]>();
  const builtin = new Map<string, string[]>();
  for (const c of state.chains) if (owns(c)) chains.set(c, []);
  for (const r of state.rules) if (owns(r.chain)) chains.get(r.chain)?.push(r.spec) ?? chains.set(r.chain, [r.spec]);
  const recorded = new Map<string, number>();
  for (const [chain, specs] of chains) {
    if (!chain.startsWith(RECORD_PREFIX)) continue;
    for (const spec of specs) {
      const key = `${chain.slice(RECORD_PREFIX.length)} ${spec}`;
      recorded.set(key, (recorded.get(key) ?? 0) + 1);
    }
  }
  for (const r of state.rules) {
    if (!isBuiltinChain(r.chain, state.table)) continue;
    const key = `${r.chain} ${r.spec}`;
    const target = targetOf(r.spec);
    const credit = recorded.get(key) ?? 0;
    const ours = (target !== undefined && owns(target)) || credit > 0 || wanted.has(key);
    if (credit > 0) recorded.set(key, credit - 1);
    if (ours) builtin.set(r.chain, [...(builtin.get(r.chain) ?? []), r.spec]);
  }
  return { table: state.table, chains, builtin };
}

export function isEmptyOwned(o: OwnedTable): boolean {
  return o.chains.size === 0 && o.builtin.size === 0;
}

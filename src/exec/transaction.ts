import { declaredChains, isBuiltinChain, rulesFor, TABLES } from '../model/chains.js';
import { appliedRules } from '../model/ownership.js';
import type { Plan } from '../model/plan.js';
import type { Family, Table } from '../model/rule.js';
import { formatRuleLine } from '../render/restore.js';
import { renderSaveFamily } from '../render/save.js';
import { ownedPart, ownershipOf, parseSave, targetOf, type FamilyState, type OwnedTable, type Ownership, type SavedRule, type TableState } from './state.js';

/**
 * One table's change in a single `iptables-restore --noflush` block, in this order: create-or-flush chains
 * (`:C - [0:0]`), delete our rules from builtin chains, delete chains no longer wanted, add rules. Each
 * block is one kernel transaction on both backends.
 */
export interface TableEdit {
  readonly table: Table;
  readonly flushChains: readonly string[];
  readonly deleteRules: readonly SavedRule[];
  readonly deleteChains: readonly string[];
  readonly addLines: readonly string[];
}

export function isEmptyEdit(e: TableEdit): boolean {
  return e.flushChains.length + e.deleteRules.length + e.deleteChains.length + e.addLines.length === 0;
}

export function renderEdits(edits: readonly TableEdit[]): string {
  const lines: string[] = [];
  for (const e of edits.filter((x) => !isEmptyEdit(x))) {
    lines.push(`*${e.table}`);
    for (const c of e.flushChains) lines.push(`:${c} - [0:0]`);
    for (const r of e.deleteRules) lines.push(`-D ${r.chain} ${r.spec}`);
    for (const c of e.deleteChains) lines.push(`-X ${c}`);
    lines.push(...e.addLines, 'COMMIT');
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

const emptyTable = (table: Table): TableState => ({ table, chains: [], rules: [] });

/** What the plan leaves in one family, as iptables-save would print it, parsed. */
export function expectedState(plan: Plan, family: Family): FamilyState {
  return parseSave(renderSaveFamily(plan, family).join('\n'));
}

/**
 * A family that holds nobody's rules and no chain beyond the builtin ones (a fresh pod's). Nothing in it can
 * be ours, so what counts as ours does not matter to any edit made on it: convergeEdits gives the same
 * edits for every ownership (test/unit/exec/transaction.test.ts).
 */
export function isBare(state: FamilyState): boolean {
  return [...state.values()].every((t) => t.rules.length === 0 && t.chains.every((c) => isBuiltinChain(c, t.table)));
}

/** Whether the plan puts any rule in this family. */
export function plansRules(plan: Plan, family: Family): boolean {
  const applied = appliedRules(plan);
  return TABLES.some((table) => rulesFor(applied, family, table).length > 0);
}

/** The ownership convergeEdits needs on a bare family: none (see isBare). */
export const NO_OWNERSHIP: Ownership = ownershipOf([]);

/** `chain spec` of every rule the plan puts in a builtin chain (save spelling). */
function wantedBuiltinRules(expected: FamilyState): Set<string> {
  const out = new Set<string>();
  for (const t of expected.values()) for (const r of t.rules) if (isBuiltinChain(r.chain, t.table)) out.add(`${r.chain} ${r.spec}`);
  return out;
}

/** What counts as ours in one family when applying or removing this plan (`expected`: if already rendered). */
export function ownershipFor(plan: Plan, family: Family, expected: FamilyState = expectedState(plan, family)): Ownership {
  return ownershipOf(plan.ownedChains, wantedBuiltinRules(expected));
}

/** Our part of every table of a family. */
export function ownedTables(state: FamilyState, ownership: Ownership): Map<Table, OwnedTable> {
  return new Map([...state.values()].map((t) => [t.table, ownedPart(t, ownership)]));
}

/**
 * Of the chains we mean to delete, those a remaining rule still jumps to (a rule in a user chain that stays:
 * another config's, or someone else's), mapped to that chain. Rules in builtin chains that jump to them are
 * deleted by the caller. A kept chain that is not flushed keeps what it jumps to as well.
 */
function stillReferenced(state: TableState, deleting: ReadonlySet<string>, staying: (chain: string) => boolean, keptAreFlushed: boolean): Map<string, string> {
  const kept = new Map<string, string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const r of state.rules) {
      const t = targetOf(r.spec);
      if (t !== undefined && deleting.has(t) && !kept.has(t) && !isBuiltinChain(r.chain, state.table) && (staying(r.chain) || (!keptAreFlushed && kept.has(r.chain)))) {
        kept.set(t, r.chain);
        changed = true;
      }
    }
  }
  return kept;
}

function removeAll(owned: OwnedTable | undefined): Pick<TableEdit, 'deleteRules'> & { chains: string[] } {
  const deleteRules = [...(owned?.builtin ?? new Map<string, readonly string[]>())].flatMap(([chain, specs]) => specs.map((spec) => ({ chain, spec })));
  return { deleteRules, chains: [...(owned?.chains.keys() ?? [])] };
}

/**
 * Replaces everything of ours in the family with the plan: flush or create the plan's chains, delete every
 * rule of ours in builtin chains and every ISTIO_* chain the plan does not want, then replay the plan's
 * appends and inserts (so inserts land exactly as on a fresh apply). A clean namespace gets the plan as is.
 */
export function convergeEdits(plan: Plan, family: Family, current: FamilyState, ownership: Ownership = ownershipFor(plan, family)): TableEdit[] {
  const owned = ownedTables(current, ownership);
  const applied = appliedRules(plan);
  return TABLES.map((table) => {
    const rules = rulesFor(applied, family, table);
    const wanted = declaredChains(rules);
    const { deleteRules, chains } = removeAll(owned.get(table));
    const stale = chains.filter((c) => !wanted.includes(c));
    // A stale chain someone else's chain still jumps to is flushed (so it passes everything on) but kept.
    const referenced = stillReferenced(current.get(table) ?? emptyTable(table), new Set(stale), (c) => !chains.includes(c), true);
    return { table, flushChains: [...wanted, ...stale], deleteRules, deleteChains: stale.filter((c) => !referenced.has(c)), addLines: rules.map((r) => formatRuleLine(r, family)) };
  });
}

/**
 * Puts a family back to a snapshot taken before we changed it: removes whatever of ours is there now, then
 * re-creates the snapshot's ISTIO_* chains and re-inserts its builtin-chain rules at their old positions
 * (in ascending order, so positions among the untouched foreign rules come out exactly as they were).
 */
export function rollbackEdits(now: FamilyState, before: FamilyState, ownership: Ownership): TableEdit[] {
  const ownedNow = ownedTables(now, ownership);
  const ownedBefore = { owns: ownership.owns, wanted: new Set<string>() };
  return TABLES.map((table) => {
    const prev = before.get(table) ?? emptyTable(table);
    const prevOwned = ownedPart(prev, ownedBefore);
    const { deleteRules, chains } = removeAll(ownedNow.get(table));
    const keep = [...prevOwned.chains.keys()];
    const addLines: string[] = [];
    for (const [chain, specs] of prevOwned.chains) addLines.push(...specs.map((s) => `-A ${chain} ${s}`));
    const position = new Map<string, number>();
    for (const r of prev.rules) {
      if (!isBuiltinChain(r.chain, table)) continue;
      const i = (position.get(r.chain) ?? 0) + 1;
      position.set(r.chain, i);
      if (prevOwned.builtin.get(r.chain)?.includes(r.spec)) addLines.push(`-I ${r.chain} ${i} ${r.spec}`);
    }
    return {
      table,
      flushChains: [...new Set([...keep, ...chains])],
      deleteRules,
      deleteChains: chains.filter((c) => !keep.includes(c)),
      addLines,
    };
  });
}

/**
 * `--cleanup-only`: removes exactly what this config creates — its rules in builtin chains (as many times as
 * it adds them), rules jumping into the chains it removes, and its ISTIO_* chains — and nothing else. A chain
 * still referenced by a chain that stays (another config's, or someone else's) is left in place (and reported).
 */
export function cleanupEdits(plan: Plan, family: Family, current: FamilyState): { edits: TableEdit[]; kept: string[] } {
  const expected = expectedState(plan, family);
  const applied = appliedRules(plan);
  const kept: string[] = [];
  const edits = TABLES.map((table): TableEdit => {
    const state = current.get(table) ?? emptyTable(table);
    const mine = new Set(declaredChains(rulesFor(applied, family, table)));
    const present = state.chains.filter((c) => mine.has(c));
    // Never remove a chain that a rule we leave alone still jumps to.
    const referenced = stillReferenced(state, new Set(present), (c) => !present.includes(c), false);
    for (const [chain, user] of referenced) kept.push(`${table} ${chain} (still used by ${user})`);
    const remove = new Set(present.filter((c) => !referenced.has(c)));
    const budget = new Map<string, number>();
    for (const r of expected.get(table)?.rules ?? []) {
      if (isBuiltinChain(r.chain, table)) budget.set(`${r.chain} ${r.spec}`, (budget.get(`${r.chain} ${r.spec}`) ?? 0) + 1);
    }
    const deleteRules = state.rules.filter((r) => {
      if (!isBuiltinChain(r.chain, table)) return false;
      const t = targetOf(r.spec);
      if (t !== undefined && remove.has(t)) return true;
      const key = `${r.chain} ${r.spec}`;
      const left = budget.get(key) ?? 0;
      if (left === 0) return false;
      budget.set(key, left - 1);
      return true;
    });
    return { table, flushChains: [...remove], deleteRules, deleteChains: [...remove], addLines: [] };
  });
  return { edits, kept };
}

import type { Family, Table } from '../model/rule.js';
import { TABLES } from '../model/chains.js';
import { isEmptyOwned, ownedPart, type FamilyState, type OwnedTable, type Ownership } from '../exec/state.js';

/** One difference: a rule or chain of ours, or a piece of routing, that is missing or should not be there. */
export interface DriftItem {
  readonly kind: 'rule' | 'chain' | 'table' | 'route' | 'ip rule' | 'address';
  /** `-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN (nat, ipv4)`, `local ::/0 dev lo table 133`. */
  readonly text: string;
}

export interface Drift {
  readonly missing: readonly DriftItem[];
  readonly unexpected: readonly DriftItem[];
}

export function isEqual(d: Drift): boolean {
  return d.missing.length === 0 && d.unexpected.length === 0;
}

export function mergeDrift(...all: readonly Drift[]): Drift {
  return { missing: all.flatMap((d) => d.missing), unexpected: all.flatMap((d) => d.unexpected) };
}

/** Indices of `have` and `want` that a longest common subsequence keeps (rule order matters in a chain). */
export function commonSubsequence(have: readonly string[], want: readonly string[]): { keptHave: Set<number>; keptWant: Set<number> } {
  const n = have.length;
  const m = want.length;
  const len: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const row = len[i] as number[];
      row[j] = have[i] === want[j] ? (len[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(len[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const keptHave = new Set<number>();
  const keptWant = new Set<number>();
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (have[i] === want[j]) {
      keptHave.add(i++);
      keptWant.add(j++);
    } else if ((len[i + 1]?.[j] ?? 0) >= (len[i]?.[j + 1] ?? 0)) i++;
    else j++;
  }
  return { keptHave, keptWant };
}

function compareChain(chain: string, have: readonly string[] | undefined, want: readonly string[] | undefined, where: string, builtin: boolean): Drift {
  const h = have ?? [];
  const w = want ?? [];
  const { keptHave, keptWant } = commonSubsequence(h, w);
  const rule = (spec: string): DriftItem => ({ kind: 'rule', text: `-A ${chain} ${spec} (${where})` });
  const chainItem: DriftItem = { kind: 'chain', text: `-N ${chain} (${where})` };
  return {
    missing: [...(!builtin && have === undefined && want !== undefined ? [chainItem] : []), ...w.filter((_, j) => !keptWant.has(j)).map(rule)],
    unexpected: [...(!builtin && want === undefined && have !== undefined ? [chainItem] : []), ...h.filter((_, i) => !keptHave.has(i)).map(rule)],
  };
}

/** Our part of one table now against what the config wants there: chains, rules and their order. */
export function compareOwnedTable(have: OwnedTable | undefined, want: OwnedTable | undefined, table: Table, family: Family): Drift {
  const where = `${table}, ${family}`;
  const parts: Drift[] = [];
  const chains = new Set([...(want?.chains.keys() ?? []), ...(have?.chains.keys() ?? [])]);
  for (const c of chains) parts.push(compareChain(c, have?.chains.get(c), want?.chains.get(c), where, false));
  const builtins = new Set([...(want?.builtin.keys() ?? []), ...(have?.builtin.keys() ?? [])]);
  for (const c of builtins) parts.push(compareChain(c, have?.builtin.get(c) ?? [], want?.builtin.get(c) ?? [], where, true));
  return mergeDrift(...parts);
}

/**
 * The one comparison of a family's rules with what a config installs — used by `--verify`, by the apply
 * path's "a different set of our rules" decision and by the CNI CHECK. Only what is ours counts (ISTIO_*
 * chains, our rules in builtin chains); foreign rules anywhere are ignored.
 */
export function compareRules(current: FamilyState, expected: FamilyState, ownership: Ownership, family: Family): { drift: Drift; residue: boolean } {
  const parts: Drift[] = [];
  let residue = false;
  for (const table of TABLES) {
    const have = current.get(table);
    const want = expected.get(table);
    const h = have === undefined ? undefined : ownedPart(have, ownership);
    const w = want === undefined ? undefined : ownedPart(want, ownership);
    if (h !== undefined && !isEmptyOwned(h)) residue = true;
    parts.push(compareOwnedTable(h, w, table, family));
  }
  return { drift: mergeDrift(...parts), residue };
}

/** `missing: …` / `unexpected: …` / `missing route: …`, one difference a line. */
export function formatDriftLines(d: Drift): string[] {
  const line = (verb: string, i: DriftItem) => (i.kind === 'rule' || i.kind === 'chain' ? `${verb}: ${i.text}` : `${verb} ${i.kind}: ${i.text}`);
  return [...d.missing.map((i) => line('missing', i)), ...d.unexpected.map((i) => line('unexpected', i))];
}

/** `--json`: `{"equal", "missing", "unexpected"}`; routing items keep their kind as a prefix. */
export function formatDriftJson(d: Drift): string {
  const item = (i: DriftItem) => (i.kind === 'rule' || i.kind === 'chain' ? i.text : `${i.kind}: ${i.text}`);
  return `${JSON.stringify({ equal: isEqual(d), missing: d.missing.map(item), unexpected: d.unexpected.map(item) })}\n`;
}

import { commonSubsequence, mergeDrift, type Drift, type DriftItem } from './drift.js';

/**
 * Drift of native nftables state: the expected listing (the save-format dry-run, which the kernel tests
 * prove equal to a fresh apply) against `nft -s list ruleset`, table by table for the tables the mode owns.
 * Other tables are not ours and never compared; iptables-nft tables holding Istio's ISTIO_* chains are a
 * difference of their own (two captures acting on the same packets). Pure.
 */

/** `nft list ruleset` text → each top-level table's text, keyed by `family name`. */
export function splitNftTables(listing: string): Map<string, string> {
  const out = new Map<string, string>();
  let key: string | undefined;
  let lines: string[] = [];
  for (const line of listing.split('\n')) {
    const head = /^table (\S+) (\S+) \{$/.exec(line);
    if (head) {
      key = `${head[1]} ${head[2]}`;
      lines = [line];
      continue;
    }
    if (key === undefined) continue;
    lines.push(line);
    if (line === '}') {
      out.set(key, lines.join('\n'));
      key = undefined;
    }
  }
  return out;
}

/** A table's statements as `chain output: counter jump istio-output` (sets and maps alike), in order. */
function statementsOf(table: string): { blocks: string[]; statements: string[] } {
  const blocks: string[] = [];
  const statements: string[] = [];
  let block = '';
  let inElements = false;
  for (const raw of table.split('\n').slice(1)) {
    const line = raw.trim();
    const head = /^(chain|set|map) (\S+) \{$/.exec(line);
    if (head) {
      block = `${head[1]} ${head[2]}`;
      blocks.push(block);
    } else if (line === '}') {
      block = '';
      inElements = false;
    } else if (line !== '') {
      // A set's elements are the pods added so far (--add-pod-ip), not part of any one config: never compared.
      inElements ||= line.startsWith('elements = ');
      if (!inElements) statements.push(`${block}: ${line}`);
    }
  }
  return { blocks, statements };
}

/** One of our tables now against what the config wants: blocks, then statements in order. */
function compareNftTable(key: string, want: string, have: string): Drift {
  const w = statementsOf(want);
  const h = statementsOf(have);
  const { keptHave, keptWant } = commonSubsequence(h.statements, w.statements);
  const item = (kind: 'rule' | 'chain') => (text: string): DriftItem => ({ kind, text: `${text} (${key})` });
  return {
    missing: [...w.blocks.filter((b) => !h.blocks.includes(b)).map(item('chain')), ...w.statements.filter((_, j) => !keptWant.has(j)).map(item('rule'))],
    unexpected: [...h.blocks.filter((b) => !w.blocks.includes(b)).map(item('chain')), ...h.statements.filter((_, i) => !keptHave.has(i)).map(item('rule'))],
  };
}

export function diffNftState(expected: string, actual: string, owned: readonly string[], iptablesChains: readonly string[]): Drift {
  const want = splitNftTables(expected);
  const have = splitNftTables(actual);
  const parts: Drift[] = [];
  for (const name of owned) {
    const key = `inet ${name}`;
    const w = want.get(key);
    const h = have.get(key);
    if (w === undefined && h !== undefined) parts.push({ missing: [], unexpected: [{ kind: 'table', text: key }] });
    else if (w !== undefined && h === undefined) parts.push({ missing: [{ kind: 'table', text: key }], unexpected: [] });
    else if (w !== undefined && h !== undefined && w !== h) parts.push(compareNftTable(key, w, h));
  }
  // Istio's iptables chains next to the native tables: two captures acting on the same packets.
  parts.push({ missing: [], unexpected: iptablesChains.map((c) => ({ kind: 'chain', text: `${c} (iptables, next to the native tables)` })) });
  return mergeDrift(...parts);
}

/**
 * Native tables of the same mode found while verifying iptables rules: both captures would act on the same
 * packets, so each is a difference of its own. `present` lists `family name` of every table in the namespace.
 */
export function nativeTablesNextToIptables(present: readonly { family: string; name: string }[], owned: readonly string[]): Drift {
  const found = present.filter((t) => owned.includes(t.name));
  return { missing: [], unexpected: found.map((t) => ({ kind: 'table', text: `${t.family} ${t.name} (native nftables, next to the iptables rules)` })) };
}

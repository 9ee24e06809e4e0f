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

/** The first line where two table texts differ, for a one-line report. */
function firstDifference(want: string, have: string): string {
  const a = want.split('\n');
  const b = have.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `expected ${JSON.stringify((a[i] ?? '(end)').trim())}, found ${JSON.stringify((b[i] ?? '(end)').trim())}`;
  }
  return 'identical';
}

export function diffNftState(expected: string, actual: string, owned: readonly string[], iptablesChains: readonly string[]): string[] {
  const want = splitNftTables(expected);
  const have = splitNftTables(actual);
  const out: string[] = [];
  for (const name of owned) {
    const key = `inet ${name}`;
    const w = want.get(key);
    const h = have.get(key);
    if (w === undefined && h !== undefined) out.push(`table ${key} is present but this config has none`);
    else if (w !== undefined && h === undefined) out.push(`table ${key} is missing`);
    else if (w !== undefined && h !== undefined && w !== h) out.push(`table ${key} differs: ${firstDifference(w, h)}`);
  }
  if (iptablesChains.length > 0) out.push(`iptables capture chains are present next to the native tables: ${iptablesChains.join(', ')}`);
  return out;
}

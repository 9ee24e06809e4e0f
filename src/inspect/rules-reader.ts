import { binaryName } from '../exec/detect.js';
import { parseSave, tokenize, type TableState } from '../exec/state.js';
import type { Runner } from '../exec/runner.js';
import type { Family, Table } from '../model/rule.js';

/**
 * The capture rules of a namespace in every backend, read without changing anything: the iptables-save
 * output of both iptables backends (legacy and nft) for both families, and the native nftables tables.
 *
 * This is the one narrow door precheck reads rules through. It rests on the apply path's state reader
 * (exec/state.ts parseSave) so that there is one parser of rule text; when inspect/ gains the shared
 * save-text parser into the model's Rule data, only this file changes.
 */

export type IptablesBackend = 'legacy' | 'nft';

export interface InspectedRule {
  readonly table: Table;
  readonly chain: string;
  /** The rule's match and target tokens as iptables-save prints them (without `-A chain`). */
  readonly tokens: readonly string[];
}

export interface BackendRules {
  readonly backend: IptablesBackend;
  readonly family: Family;
  /** Every chain each table declares. */
  readonly chains: ReadonlyMap<Table, readonly string[]>;
  readonly rules: readonly InspectedRule[];
}

export interface NftTable {
  readonly family: string;
  readonly name: string;
}

export interface InspectedRules {
  /** One entry per backend and family whose save ran (a backend that is not installed is left out). */
  readonly iptables: readonly BackendRules[];
  /** Tables of `nft list ruleset` (iptables-nft's own tables included); empty when nft is missing. */
  readonly nftTables: readonly NftTable[];
  /** Commands that could not run, as `iptables-legacy-save: <first stderr line>` (`nft: …` for nft). */
  readonly unreadable: readonly string[];
}

function toBackendRules(backend: IptablesBackend, family: Family, tables: ReadonlyMap<Table, TableState>): BackendRules {
  const chains = new Map<Table, readonly string[]>();
  const rules: InspectedRule[] = [];
  for (const [table, state] of tables) {
    chains.set(table, state.chains);
    for (const r of state.rules) rules.push({ table, chain: r.chain, tokens: tokenize(r.spec) });
  }
  return { backend, family, chains, rules };
}

/** Table names out of `nft -j list ruleset`; anything else in the JSON is not needed here. */
export function parseNftTables(json: string): NftTable[] {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    return [];
  }
  const items = (doc as { nftables?: unknown } | null)?.nftables;
  if (!Array.isArray(items)) return [];
  return items.flatMap((item: unknown) => {
    const t = (item as { table?: { family?: unknown; name?: unknown } } | null)?.table;
    return typeof t?.family === 'string' && typeof t.name === 'string' ? [{ family: t.family, name: t.name }] : [];
  });
}

const firstLine = (s: string) => s.trim().split('\n')[0] ?? '';

/** Reads every backend's rules in the runner's namespace. Never writes. */
export async function readCaptureRules(runner: Runner): Promise<InspectedRules> {
  const combos = (['ipv4', 'ipv6'] as const).flatMap((family) => (['legacy', 'nft'] as const).map((backend) => ({ family, backend })));
  const [saves, nft] = await Promise.all([
    Promise.all(combos.map(async (c) => ({ ...c, cmd: binaryName(c.family, c.backend, 'save'), result: await runner.run(binaryName(c.family, c.backend, 'save'), []) }))),
    runner.run('nft', ['-j', 'list', 'ruleset']),
  ]);
  const iptables: BackendRules[] = [];
  const unreadable: string[] = [];
  for (const s of saves) {
    if (s.result.exitCode === 0) iptables.push(toBackendRules(s.backend, s.family, parseSave(s.result.stdout)));
    else unreadable.push(`${s.cmd}: ${firstLine(s.result.stderr) || `exit ${s.result.exitCode}`}`);
  }
  if (nft.exitCode !== 0) unreadable.push(`nft: ${firstLine(nft.stderr) || `exit ${nft.exitCode}`}`);
  return { iptables, nftTables: nft.exitCode === 0 ? parseNftTables(nft.stdout) : [], unreadable };
}

/** The value after an option (`--uid-owner 1337` → "1337"), for each time the option appears. */
export function optionValues(tokens: readonly string[], option: string): string[] {
  const out: string[] = [];
  tokens.forEach((t, i) => {
    const next = tokens[i + 1];
    if (t === option && next !== undefined) out.push(next);
  });
  return out;
}

/** The rule's target (`-j X` or `-g X`). */
export function targetOf(tokens: readonly string[]): string | undefined {
  const i = tokens.findIndex((t) => t === '-j' || t === '-g');
  return i >= 0 ? tokens[i + 1] : undefined;
}

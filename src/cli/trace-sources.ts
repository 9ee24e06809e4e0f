import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, EnvironmentError } from '../errors.js';
import type { TraceOptions } from '../config/trace.js';
import { parseNftJson } from '../inspect/nft-json.js';
import { buildNftRules, looksLikeNftText, parseNftRuleset, type NftRules } from '../inspect/nft-ruleset.js';
import { parseSaveText } from '../inspect/save-text.js';
import type { ParsedTable } from '../inspect/types.js';
import type { Cidr, Family } from '../model/cidr.js';
import { formatAddress } from '../render/inet.js';
import type { Runner } from '../exec/runner.js';
import type { CliDeps } from './run.js';

/** What the walk needs besides the packet: the family's tables, sets, and the route the kernel would pick. */
export interface Sources {
  readonly tables: readonly ParsedTable[];
  readonly sets: ReadonlyMap<string, readonly Cidr[]> | undefined;
  readonly route: { readonly dev: string; readonly src: Cidr | undefined; readonly local: boolean } | undefined;
  readonly notes: readonly string[];
}

function readText(file: string, stdin: () => string): string {
  try {
    return file === '-' ? stdin() : readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('--rules', file, `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** iptables tables hold rules: a rule anywhere, or a builtin chain whose policy is not ACCEPT. */
const holdsIptablesRules = (tables: readonly ParsedTable[]) => tables.some((t) => t.rules.length > 0 || t.chains.some((c) => c.policy !== undefined && c.policy !== 'ACCEPT'));

const listNativeNames = (nft: NftRules, family: Family) => nft.tables.filter((t) => t.family === family).map((t) => t.label ?? t.table);

/** A dump's tables of every family it holds (native nft tables with their sets), parsed by the one reader. */
export interface DumpTables {
  readonly tables: readonly ParsedTable[];
  readonly nft: NftRules | undefined;
}

/** `nft list ruleset` text or `nft -j` JSON (native tables), or iptables-save output, told apart by their shape; `name` is the flag and file errors name. */
export function parseDump(text: string, name: readonly [flag: string, file: string]): DumpTables {
  const json = /^\s*\{\s*"nftables"/.test(text);
  if (json || looksLikeNftText(text)) {
    const nft = json ? buildNftRules(parseNftJson(text)) : parseNftRuleset(text);
    if (nft.problems.length > 0) throw new ConfigError(name[0], name[1], `is not nft list ruleset output: ${nft.problems[0]}`);
    return { tables: nft.tables, nft };
  }
  const rs = parseSaveText(text);
  if (rs.problems.length > 0) throw new ConfigError(name[0], name[1], `is not iptables-save or nft list ruleset output: ${rs.problems[0]}`);
  if (rs.tables.length === 0) throw new ConfigError(name[0], name[1], 'holds no *filter/*nat/*mangle/*raw table and no nft table');
  return { tables: rs.tables, nft: undefined };
}

/** A `--rules` file (`-` = stdin) read and parsed. */
export function readDumpTables(file: string, stdin: () => string): DumpTables {
  return parseDump(readText(file, stdin), ['--rules', file]);
}

/** A dump's tables of one family, as trace walks them. */
export function readDump(file: string, family: Family, stdin: () => string): Sources {
  const { tables, nft } = readDumpTables(file, stdin);
  const own = tables.filter((t) => t.family === family);
  if (nft === undefined) return { tables: own, sets: undefined, route: undefined, notes: [] };
  return { tables: own, sets: nft.sets, route: undefined, notes: [`rules: native nftables (${listNativeNames(nft, family).join(', ') || `no ${family} table`})`] };
}

function setNames(tables: readonly ParsedTable[]): string[] {
  const names = tables.filter((t) => t.label === undefined).flatMap((t) => t.rules.flatMap((r) => r.match.flatMap((c) => (c.k === 'set' ? [typeof c.name === 'string' ? c.name : ''] : c.k === 'set-match' ? [c.name] : []))));
  return [...new Set(names)];
}

/** One family's tables as the kernel runs them: the iptables backend apply would choose, and the native nft tables. */
export interface LiveTables {
  readonly iptables: readonly ParsedTable[];
  readonly native: readonly ParsedTable[];
  readonly backend: string;
  readonly alsoHeld: string | undefined;
}

/** Reads the namespace's rules of these families through the one namespace reader; changes nothing. */
export async function readLiveTables(runner: Runner, families: readonly Family[]): Promise<{ byFamily: ReadonlyMap<Family, LiveTables>; nft: NftRules | undefined }> {
  const reader = await import('../inspect/namespace-rules.js');
  const read = await reader.readNamespaceRules(runner, { families, nftTables: false, nftRules: true });
  const byFamily = new Map<Family, LiveTables>();
  for (const family of families) {
    const { rules, alsoHeld } = reader.walkedRules(read, family);
    byFamily.set(family, { iptables: rules.tables.filter((t) => t.family === family), native: read.nftRules?.tables.filter((t) => t.family === family) ?? [], backend: rules.backend, alsoHeld });
  }
  return { byFamily, nft: read.nftRules };
}

/** The runner for `--netns` (or the current namespace), after checking the namespace exists. */
export async function makeLiveRunner(netns: string | undefined, deps: CliDeps): Promise<Runner> {
  if (netns !== undefined && !existsSync(netns)) throw new EnvironmentError(`network namespace ${netns} does not exist (--netns)`);
  const { createSpawnRunner } = await import('../exec/spawn-runner.js');
  return (deps.makeRunner ?? createSpawnRunner)(netns);
}

/**
 * The namespace's rules as the kernel runs them: the iptables backend's tables and, when the namespace holds
 * native nft tables, those too (the walk enters both in priority order); notes say which were walked.
 */
export async function readLive(o: TraceOptions, netns: string | undefined, deps: CliDeps): Promise<Sources> {
  const runner = await makeLiveRunner(netns, deps);
  const live = await import('../inspect/live.js');
  const family = o.dst.family;
  const read = await readLiveTables(runner, [family]);
  const { iptables, native, backend, alsoHeld } = read.byFamily.get(family) as LiveTables;
  const notes = native.length === 0 || holdsIptablesRules(iptables) ? [`rules: ${backend} backend`] : [];
  if (native.length > 0) notes.push(`rules: native nftables (${listNativeNames(read.nft ?? { tables: [], sets: new Map(), problems: [] }, family).join(', ')})`);
  if (native.length > 0 && holdsIptablesRules(iptables)) notes.push(`note: iptables (${backend}) and native nftables both hold rules; the walk enters both in the kernel's priority order`);
  if (alsoHeld !== undefined) notes.push(`note: the ${alsoHeld} backend holds rules as well; the kernel runs both, this walk covers ${backend}'s`);
  const [ipsets, route] = await Promise.all([live.readSetMembers(runner, setNames(iptables)), o.direction === 'outbound' ? live.routeGet(runner, formatAddress(o.dst.bytes), o.mark, o.uid) : undefined]);
  const sets = ipsets === undefined && native.length === 0 ? undefined : new Map([...(ipsets ?? []), ...(read.nft?.sets ?? [])]);
  return { tables: [...iptables, ...native], sets, route, notes };
}

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

/** A dump: `nft list ruleset` text or `nft -j` JSON (native tables), or iptables-save output, told apart by their shape. */
export function readDump(file: string, family: Family, stdin: () => string): Sources {
  const text = readText(file, stdin);
  const json = /^\s*\{\s*"nftables"/.test(text);
  if (json || looksLikeNftText(text)) {
    const nft = json ? buildNftRules(parseNftJson(text)) : parseNftRuleset(text);
    if (nft.problems.length > 0) throw new ConfigError('--rules', file, `is not nft list ruleset output: ${nft.problems[0]}`);
    const tables = nft.tables.filter((t) => t.family === family);
    return { tables, sets: nft.sets, route: undefined, notes: [`rules: native nftables (${listNativeNames(nft, family).join(', ') || `no ${family} table`})`] };
  }
  const rs = parseSaveText(text);
  if (rs.problems.length > 0) throw new ConfigError('--rules', file, `is not iptables-save or nft list ruleset output: ${rs.problems[0]}`);
  if (rs.tables.length === 0) throw new ConfigError('--rules', file, 'holds no *filter/*nat/*mangle/*raw table and no nft table');
  return { tables: rs.tables.filter((t) => t.family === family), sets: undefined, route: undefined, notes: [] };
}

function setNames(tables: readonly ParsedTable[]): string[] {
  const names = tables.filter((t) => t.label === undefined).flatMap((t) => t.rules.flatMap((r) => r.match.flatMap((c) => (c.k === 'set' ? [typeof c.name === 'string' ? c.name : ''] : c.k === 'set-match' ? [c.name] : []))));
  return [...new Set(names)];
}

/**
 * The namespace's rules as the kernel runs them: the iptables backend's tables and, when the namespace holds
 * native nft tables, those too (the walk enters both in priority order); notes say which were walked.
 */
export async function readLive(o: TraceOptions, netns: string | undefined, deps: CliDeps): Promise<Sources> {
  if (netns !== undefined && !existsSync(netns)) throw new EnvironmentError(`network namespace ${netns} does not exist (--netns)`);
  const [{ createSpawnRunner }, live, reader] = await Promise.all([import('../exec/spawn-runner.js'), import('../inspect/live.js'), import('../inspect/namespace-rules.js')]);
  const runner: Runner = (deps.makeRunner ?? createSpawnRunner)(netns);
  const family = o.dst.family;
  const read = await reader.readNamespaceRules(runner, { families: [family], nftTables: false, nftRules: true });
  const { rules, alsoHeld } = reader.walkedRules(read, family);
  const iptables = rules.tables.filter((t) => t.family === family);
  const native = read.nftRules?.tables.filter((t) => t.family === family) ?? [];
  const notes = native.length === 0 || holdsIptablesRules(iptables) ? [`rules: ${rules.backend} backend`] : [];
  if (native.length > 0) notes.push(`rules: native nftables (${listNativeNames(read.nftRules ?? { tables: [], sets: new Map(), problems: [] }, family).join(', ')})`);
  if (native.length > 0 && holdsIptablesRules(iptables)) notes.push(`note: iptables (${rules.backend}) and native nftables both hold rules; the walk enters both in the kernel's priority order`);
  if (alsoHeld !== undefined) notes.push(`note: the ${alsoHeld} backend holds rules as well; the kernel runs both, this walk covers ${rules.backend}'s`);
  const [ipsets, route] = await Promise.all([live.readSetMembers(runner, setNames(iptables)), o.direction === 'outbound' ? live.routeGet(runner, formatAddress(o.dst.bytes), o.mark, o.uid) : undefined]);
  const sets = ipsets === undefined && native.length === 0 ? undefined : new Map([...(ipsets ?? []), ...(read.nftRules?.sets ?? [])]);
  return { tables: [...iptables, ...native], sets, route, notes };
}

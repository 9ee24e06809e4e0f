import { CommandError, reasonOf } from '../errors.js';
import { binaryName, chooseBackend, hintFor, holdsRules, type Backend } from '../exec/detect.js';
import type { RunResult, Runner } from '../exec/runner.js';
import type { Family } from '../model/rule.js';
import { parseNftJson } from './nft-json.js';
import { buildNftRules, type NftRules } from './nft-ruleset.js';
import { parseSaveText } from './save-text.js';
import type { ParsedTable } from './types.js';

/**
 * The one reader of a namespace's rules for the read side (trace, precheck): it changes nothing and takes no
 * lock, and every command goes through the caller's runner (which enters the namespace). Its sources: the
 * `*-save` output of both iptables backends per family, read by the one save-text parser; `nft -j list ruleset`
 * for the native nftables tables (their names; for trace, their rules too); and, for a family neither backend's save can read,
 * plain `iptables-save` (an iptables without the -legacy/-nft names).
 */

/** A table of `nft list ruleset` (iptables-nft's own tables included). */
export interface NftTable {
  readonly family: string;
  readonly name: string;
}

export type IptablesBackend = 'legacy' | 'nft';
const BACKENDS: readonly IptablesBackend[] = ['legacy', 'nft'];

/** One family's rules as one backend's save printed them. */
export interface BackendRules {
  readonly backend: Backend;
  readonly family: Family;
  readonly tables: readonly ParsedTable[];
}

/** The rules a walk of one family covers, and another backend that holds rules as well (the kernel runs both). */
export interface WalkedRules {
  readonly rules: BackendRules;
  readonly alsoHeld: Backend | undefined;
}

export interface NamespaceRules {
  /** The legacy and nft saves that ran, per family read (legacy first); a backend that cannot run is left out. */
  readonly iptables: readonly BackendRules[];
  /** Per family read: the rules a walk covers, or the error when no save of that family works. */
  readonly walked: ReadonlyMap<Family, WalkedRules | CommandError>;
  /** Tables of `nft list ruleset` (iptables-nft's own included); empty when not asked for or nft is missing. */
  readonly nftTables: readonly NftTable[];
  /** The native nftables tables' rules (from the same `nft -j list ruleset`), when asked for and nft ran. */
  readonly nftRules?: NftRules;
  /** Commands that could not run, as `iptables-legacy-save: <first stderr line>` (`nft: …` for nft). */
  readonly unreadable: readonly string[];
}

export interface RulesRequest {
  readonly families: readonly Family[];
  /** Also list the native nftables tables. */
  readonly nftTables: boolean;
  /** Also read the native nftables tables' rules (trace). */
  readonly nftRules?: boolean;
}

/** The backend a walk covers, chosen as the apply path chooses it (else plain); nft named too when it holds rules as well. */
function chooseWalked(parsed: readonly BackendRules[], legacy: RunResult | undefined, nft: RunResult | undefined): WalkedRules | undefined {
  const backend = chooseBackend(legacy, nft)?.backend;
  const rules = parsed.find((b) => b.backend === backend);
  if (rules === undefined) return undefined;
  return { rules, alsoHeld: backend === 'legacy' && nft?.exitCode === 0 && holdsRules(nft.stdout) ? 'nft' : undefined };
}

async function readPlain(runner: Runner, family: Family, nft: RunResult | undefined): Promise<WalkedRules | CommandError> {
  const cmd = binaryName(family, 'plain', 'save');
  const r = await runner.run(cmd, []);
  if (r.exitCode !== 0) return new CommandError({ command: cmd, exitCode: r.exitCode, stderr: r.stderr || (nft?.stderr ?? ''), hint: hintFor(r, cmd) });
  return { rules: { backend: 'plain', family, tables: parseSaveText(r.stdout, family).tables }, alsoHeld: undefined };
}

const failure = (cmd: string, r: RunResult) => `${cmd}: ${reasonOf(r.stderr) || `exit ${r.exitCode}`}`;

/** Reads the rules of the asked families in every backend, and the native nftables tables if asked. Never writes. */
export async function readNamespaceRules(runner: Runner, request: RulesRequest): Promise<NamespaceRules> {
  const combos = request.families.flatMap((family) => BACKENDS.map((backend) => ({ family, backend, cmd: binaryName(family, backend, 'save') })));
  const [saves, nft] = await Promise.all([
    Promise.all(combos.map(async (c) => ({ ...c, result: await runner.run(c.cmd, []) }))),
    request.nftTables || request.nftRules === true ? runner.run('nft', ['-j', 'list', 'ruleset']) : undefined,
  ]);
  const iptables: BackendRules[] = [];
  const unreadable: string[] = [];
  for (const s of saves) {
    if (s.result.exitCode === 0) iptables.push({ backend: s.backend, family: s.family, tables: parseSaveText(s.result.stdout, s.family).tables });
    else unreadable.push(failure(s.cmd, s.result));
  }
  if (nft !== undefined && nft.exitCode !== 0) unreadable.push(failure('nft', nft));
  const walked = new Map<Family, WalkedRules | CommandError>();
  for (const family of request.families) {
    const save = (backend: IptablesBackend) => saves.find((s) => s.family === family && s.backend === backend)?.result;
    walked.set(family, chooseWalked(iptables.filter((b) => b.family === family), save('legacy'), save('nft')) ?? (await readPlain(runner, family, save('nft'))));
  }
  // One parse of the one `nft -j` read serves both the table names and the rules.
  const doc = nft?.exitCode === 0 ? parseNftJson(nft.stdout) : undefined;
  const nftRules = request.nftRules === true && doc !== undefined ? { nftRules: buildNftRules(doc) } : {};
  const nftTables = request.nftTables && doc !== undefined ? doc.tables.map(({ family, name }) => ({ family, name })) : [];
  return { iptables, walked, nftTables, ...nftRules, unreadable };
}

/** The rules a walk of `family` covers; throws the save's error when no backend of that family could be read. */
export function walkedRules(rules: NamespaceRules, family: Family): WalkedRules {
  const w = rules.walked.get(family);
  if (w === undefined) throw new Error(`${family} rules were not read`);
  if (w instanceof CommandError) throw w;
  return w;
}

import { CommandError } from '../errors.js';
import type { Logger } from '../log.js';
import type { NftMode } from '../model/nft/layout.js';
import type { Plan } from '../model/plan.js';
import { probeSets, renderNftApply, renderNftCleanup } from '../render/nft-apply.js';
import { buildNftTables, type NftRenderOptions } from '../render/nft-transaction.js';
import { applyRouting, missingRouting, removeRouting } from './routes.js';
import { isEqual, mergeDrift, type Drift } from '../analyze/drift.js';
import { diffNftState, splitNftTables } from '../analyze/nft-drift.js';
import { renderNftListing } from '../render/nft-listing.js';
import { ownedNftTables } from '../model/nft/layout.js';
import { NOT_FOUND, type RunResult, type Runner } from './runner.js';
import { parseNftText } from '../inspect/nft-text.js';

export interface NftReport {
  readonly backend: 'nftables';
  readonly tables: readonly string[];
  /** iptables-nft chains of Istio's found next to our tables (both would act on the same packets). */
  readonly iptablesChains: readonly string[];
  /** `unchanged`: the namespace already held exactly this config, and nothing was written. */
  readonly action?: 'applied' | 'unchanged';
}

/** `list chains` at the end of the same nft run reports the namespace's chains without another process. */
const LIST_CHAINS = 'list chains\n';

/** The error of a failed `nft` run: a missing binary gets its own hint, any other failure `otherwise`. */
export function nftFailure(args: readonly string[], r: RunResult, otherwise?: string): CommandError {
  const hint = r.exitCode === NOT_FOUND ? 'install nftables (the nft command) or put it on PATH' : otherwise;
  return new CommandError({ command: ['nft', ...args].join(' '), exitCode: r.exitCode, stderr: r.stderr, hint });
}

/** Runs `nft ARGS` (with `input` on stdin) and returns its output; throws nftFailure otherwise. */
async function runNftCommand(runner: Runner, args: readonly string[], input?: string, otherwise?: string): Promise<string> {
  const r = await runner.run('nft', [...args], input === undefined ? undefined : { input, ownerUserns: true });
  if (r.exitCode !== 0) throw nftFailure(args, r, otherwise);
  return r.stdout;
}

async function runNft(runner: Runner, text: string): Promise<string> {
  return runNftCommand(runner, ['-f', '-'], text, 'nft transactions are atomic: nothing was changed');
}

/** Istio's iptables chains (ISTIO_*) in `ip`/`ip6` tables, as `nft list chains` prints iptables-nft's tables. */
export function findIptablesCaptureChains(listing: string): string[] {
  return parseNftText(listing)
    .tables.filter((t) => t.family === 'ip' || t.family === 'ip6')
    .flatMap((t) => t.chains.filter((c) => c.name.startsWith('ISTIO_')).map((c) => `${t.family} ${t.name} ${c.name}`));
}

interface Snapshot {
  /** Our tables as `nft list ruleset` prints them now (counters included): nft reads that text back as is. */
  readonly text: string;
  readonly present: ReadonlySet<string>;
  /** The whole listing it came from ('' for a namespace the probe found without tables of ours). */
  readonly listing: string;
}

const NOTHING_OURS: Snapshot = { text: '', present: new Set(), listing: '' };

async function snapshotOwned(runner: Runner, mode: NftMode): Promise<Snapshot> {
  const listing = await runNftCommand(runner, ['list', 'ruleset']);
  const tables = splitNftTables(listing);
  const present = ownedNftTables(mode).filter((name) => tables.has(`inet ${name}`));
  return { text: present.map((name) => tables.get(`inet ${name}`) ?? '').join('\n'), present: new Set(present), listing };
}

/**
 * Our tables as they are now: nothing, without a process, when the probe (netlink) sees none of them;
 * otherwise one `nft list ruleset`.
 */
async function readOwned(runner: Runner, mode: NftMode): Promise<Snapshot> {
  const probe = await runner.probe?.();
  const owned = ownedNftTables(mode);
  if (probe !== undefined && !probe.nftTables.some((t) => t.family === 'inet' && owned.includes(t.name))) return NOTHING_OURS;
  return snapshotOwned(runner, mode);
}

/** A listing as `nft -s` would print it: counters without their values. */
const stateless = (listing: string) => listing.replace(/counter packets \d+ bytes \d+/g, 'counter');

/** Our tables already hold exactly this config (same tables, chains, specs and rules, in order). */
function holdsExactly(before: Snapshot, blocks: ReturnType<typeof buildNftTables>, mode: NftMode): boolean {
  if (before.present.size === 0) return false;
  return isEqual(diffNftState(renderNftListing(blocks, []), stateless(before.listing), ownedNftTables(mode), []));
}

const needsRouting = (plan: Plan) => plan.ipRules.length + plan.routes.length + plan.addresses.length > 0;

/**
 * Applies a plan as native nftables: ONE `nft -f -` holding every table of both families (atomic: all or
 * nothing), then the policy routing exactly as iptables mode does. What is there first: in a fresh pod the
 * probe (netlink, no process) sees none of our tables, and the transaction is the only process; otherwise
 * one `nft list ruleset` reads our tables — a pod namespace that already holds exactly this config is left
 * as it is (no transaction: counters, table and chain order kept), and a routing failure puts the tables
 * back as they were. In a pod namespace the transaction also lists the chains, so iptables capture rules
 * next to ours are reported without another process.
 */
export async function applyNftPlan(runner: Runner, plan: Plan, opts: NftRenderOptions, log: Logger): Promise<NftReport> {
  const blocks = buildNftTables(plan, opts);
  const check = opts.mode !== 'ambient-host';
  // The node side's transaction also adds and removes probe set elements: it always runs.
  const before = check || needsRouting(plan) ? await readOwned(runner, opts.mode) : undefined;
  const unchanged = check && before !== undefined && holdsExactly(before, blocks, opts.mode);
  // The chains listing: the read's when nothing is written, else the end of the transaction's own run.
  const listing = unchanged ? (before?.listing ?? '') : await runNft(runner, renderNftApply(opts.mode, plan, blocks, before?.present) + (check ? LIST_CHAINS : ''));
  const iptablesChains = check ? findIptablesCaptureChains(listing) : [];
  if (iptablesChains.length > 0) {
    log.warn({ chains: iptablesChains }, 'iptables capture rules are present next to the native nftables tables: both act on the same packets');
  }
  try {
    await applyRouting(runner, plan);
  } catch (err) {
    if (before !== undefined && !unchanged) {
      // One transaction again: our tables as they were before this run (none, if there were none).
      await runNft(runner, `${renderNftCleanup(opts.mode)}${before.text === '' ? '' : `${before.text}\n`}`);
      log.warn({ tables: ownedNftTables(opts.mode) }, 'routing failed: put the nft tables back as they were');
    }
    throw err;
  }
  return { backend: 'nftables', tables: blocks.map((b) => b.layout.name), iptablesChains, action: unchanged ? 'unchanged' : 'applied' };
}

/** `--cleanup-only --native-nftables`: deletes exactly the mode's tables (one transaction), then its routing. */
export async function cleanupNftPlan(runner: Runner, plan: Plan, mode: NftMode): Promise<NftReport> {
  await runNft(runner, renderNftCleanup(mode));
  await removeRouting(runner, plan);
  return { backend: 'nftables', tables: [], iptablesChains: [] };
}

/**
 * What differs between the namespace and this plan in native mode (CNI CHECK, verify): our tables against
 * the save-format dry-run, Istio's iptables chains next to them, and the routing. Empty when it matches.
 * On the node side the sets are compared without their elements: they hold every pod added so far.
 */
export async function checkNftPlan(runner: Runner, plan: Plan, opts: NftRenderOptions): Promise<Drift> {
  const listing = await runNftCommand(runner, ['-s', 'list', 'ruleset']);
  const expected = renderNftListing(buildNftTables(plan, opts), opts.mode === 'ambient-host' ? probeSets(plan) : []);
  const rules = diffNftState(expected, listing, ownedNftTables(opts.mode), findIptablesCaptureChains(listing));
  return mergeDrift(rules, { missing: await missingRouting(runner, plan), unexpected: [] });
}

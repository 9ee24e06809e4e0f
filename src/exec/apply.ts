import { CommandError, InterruptedError, StateConflictError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Plan } from '../model/plan.js';
import type { Family } from '../model/rule.js';
import { detectWithHints, hintFor, type Iptables, type LegacyHint } from './detect.js';
import { applyIpsets, destroyIpsets } from './ipsets.js';
import { applyRouting, missingRouting, removeRouting } from './routes.js';
import { compareRules, formatDriftLines, isEqual, mergeDrift, type Drift } from '../analyze/drift.js';
import { describeCommand, type Runner } from './runner.js';
import { parseSave, type FamilyState, type Ownership } from './state.js';
import { cleanupEdits, convergeEdits, expectedState, isBare, NO_OWNERSHIP, ownershipFor, plansRules, renderEdits, rollbackEdits } from './transaction.js';

export interface ExecOptions {
  readonly reconcile: boolean;
  readonly forceApply: boolean;
  readonly forcedBackend: 'legacy' | 'nft' | undefined;
  /** What /proc says about legacy tables (saves a process when there are none). */
  readonly legacyHint?: (family: Family) => LegacyHint;
  /** Aborted by SIGTERM/SIGINT: the apply stops after the current transaction and rolls back. */
  readonly signal?: AbortSignal;
}

function checkInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError(String(signal.reason ?? 'a signal'));
}

export interface FamilyReport {
  readonly family: Family;
  readonly backend: string;
  readonly reason: string;
  readonly action: 'applied' | 'unchanged' | 'reconciled' | 'removed' | 'clean';
}

export interface ExecReport {
  readonly families: readonly FamilyReport[];
}

interface FamilyContext {
  readonly ipt: Iptables;
  readonly before: FamilyState;
  /** What counts as ours (computed when first asked: a fresh pod's apply never needs it unless it rolls back). */
  readonly ownership: () => Ownership;
  /**
   * How our rules here differ from the plan's (the one comparison, src/analyze/drift.ts); undefined when an
   * apply found the family bare (nobody's rules: everything of the plan is missing, none of it is ours).
   */
  readonly drift: Drift | undefined;
  readonly residue: boolean;
}

const once = <T>(f: () => T): (() => T) => {
  let v: { value: T } | undefined;
  return () => (v ??= { value: f() }).value;
};

/** One `iptables-restore --noflush` of `text`; a failure is a CommandError with the tool's reason. */
export async function restore(runner: Runner, ipt: Pick<Iptables, 'restore' | 'waitArgs'>, text: string): Promise<void> {
  const args = ['--noflush', ...ipt.waitArgs];
  const r = await runner.run(ipt.restore, args, { input: text, ownerUserns: true });
  if (r.exitCode !== 0) {
    const cmd = describeCommand(ipt.restore, args);
    throw new CommandError({ command: cmd, exitCode: r.exitCode, stderr: r.stderr, hint: hintFor(r, ipt.restore) });
  }
}

/**
 * Detects the backend and reads the state of every family, the families at once (IPv4's result first).
 * `compare: 'unless-bare'` (the apply) skips the comparison on a bare family, where its answer is known —
 * all of the plan is missing — and rendering and parsing the expected state would be its largest cost.
 */
async function inspect(runner: Runner, plan: Plan, opts: ExecOptions, compare: 'always' | 'unless-bare'): Promise<FamilyContext[]> {
  const probe = await runner.probe?.();
  return Promise.all(
    plan.families.map(async (family): Promise<FamilyContext> => {
      const ipt = await detectWithHints(runner, family, probe, opts.forcedBackend, opts.legacyHint?.(family));
      const before = parseSave(ipt.state);
      if (compare === 'unless-bare' && isBare(before) && plansRules(plan, family)) {
        return { ipt, before, ownership: once(() => ownershipFor(plan, family)), drift: undefined, residue: false };
      }
      const expected = expectedState(plan, family);
      const ownership = ownershipFor(plan, family, expected);
      const { drift, residue } = compareRules(before, expected, ownership, family);
      return { ipt, before, ownership: () => ownership, drift, residue };
    }),
  );
}

/** Puts each family in `done` back to its state before this run, newest first; reports failures. */
async function rollback(runner: Runner, done: readonly FamilyContext[], log: Logger): Promise<string[]> {
  const failures: string[] = [];
  for (const ctx of [...done].reverse()) {
    try {
      const now = await runner.run(ctx.ipt.save, []);
      const text = renderEdits(rollbackEdits(parseSave(now.stdout), ctx.before, ctx.ownership()));
      if (text !== '') await restore(runner, ctx.ipt, text);
      log.warn({ family: ctx.ipt.family }, 'rolled back');
    } catch (err) {
      failures.push(`${ctx.ipt.family}: ${(err as Error).message}`);
    }
  }
  return failures;
}

/**
 * Applies a plan: per family (IPv4, then IPv6) one `iptables-restore --noflush` that leaves exactly the plan
 * of ours in the namespace; then routing. The same plan twice is a no-op. A different set of ours is an error
 * unless --reconcile. Any failure puts every family back to where it was before this run.
 */
export async function applyPlan(runner: Runner, plan: Plan, opts: ExecOptions, log: Logger): Promise<ExecReport> {
  const contexts = await inspect(runner, plan, opts, 'unless-bare');
  for (const c of contexts) log.info({ family: c.ipt.family, backend: c.ipt.backend, reason: c.ipt.reason }, 'chose iptables backend');
  const conflicts = contexts.flatMap((c) => (c.residue && c.drift !== undefined && !isEqual(c.drift) ? [c.drift] : []));
  if (conflicts.length > 0 && !opts.reconcile && !opts.forceApply) {
    throw new StateConflictError(conflicts.flatMap((d) => formatDriftLines(d)));
  }
  checkInterrupted(opts.signal);
  // Sets must exist before a rule can match them.
  await applyIpsets(runner, plan);
  const done: FamilyContext[] = [];
  const families: FamilyReport[] = [];
  try {
    for (const c of contexts) {
      const base = { family: c.ipt.family, backend: c.ipt.backend, reason: c.ipt.reason };
      if (c.drift !== undefined && isEqual(c.drift) && !opts.forceApply) {
        families.push({ ...base, action: 'unchanged' });
        continue;
      }
      const text = renderEdits(convergeEdits(plan, c.ipt.family, c.before, c.drift === undefined ? NO_OWNERSHIP : c.ownership()));
      done.push(c);
      await restore(runner, c.ipt, text);
      families.push({ ...base, action: c.residue ? 'reconciled' : 'applied' });
      checkInterrupted(opts.signal);
    }
    await applyRouting(runner, plan);
    checkInterrupted(opts.signal);
  } catch (err) {
    // Any failure (or a signal) after the first change: every family goes back to where it was.
    const failures = await rollback(runner, done, log);
    if (failures.length > 0 && err instanceof Error) err.message += `; rollback failed: ${failures.join('; ')}`;
    throw err;
  }
  return { families };
}

/** `--cleanup-only`: removes exactly what this config creates, in one restore per family, then its routing and ipsets. */
export async function cleanupPlan(runner: Runner, plan: Plan, opts: ExecOptions, log: Logger): Promise<ExecReport> {
  const families: FamilyReport[] = [];
  const probe = await runner.probe?.();
  for (const family of plan.families) {
    const ipt = await detectWithHints(runner, family, probe, opts.forcedBackend, opts.legacyHint?.(family));
    const { edits, kept } = cleanupEdits(plan, family, parseSave(ipt.state));
    for (const k of kept) log.warn({ family, chain: k }, 'left a chain another of our chains still uses');
    const text = renderEdits(edits);
    if (text !== '') await restore(runner, ipt, text);
    families.push({ family, backend: ipt.backend, reason: ipt.reason, action: text === '' ? 'clean' : 'removed' });
  }
  await removeRouting(runner, plan);
  await destroyIpsets(runner, plan);
  return { families };
}

/**
 * `--verify` and CNI CHECK: how the namespace differs from this plan — our rules (the same comparison the
 * apply path decides with) and the plan's routing. Reads only; changes nothing.
 */
export async function checkPlan(runner: Runner, plan: Plan, opts: ExecOptions): Promise<Drift> {
  const contexts = await inspect(runner, plan, opts, 'always');
  return mergeDrift(...contexts.flatMap((c) => (c.drift === undefined ? [] : [c.drift])), { missing: await missingRouting(runner, plan), unexpected: [] });
}

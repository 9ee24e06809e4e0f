import type { Plan } from '../model/plan.js';
import type { NftRenderOptions } from '../render/nft-transaction.js';
import type { Logger } from '../log.js';
import { applyPlan, checkPlan, cleanupPlan, type ExecOptions } from './apply.js';
import { applyNftPlan, checkNftPlan, cleanupNftPlan } from './nft-apply.js';
import type { Runner } from './runner.js';
import type { Drift } from '../analyze/drift.js';

/** A loaded command's plan, and its nft options when it runs in native nftables mode. */
export interface Engine {
  readonly plan: Plan;
  readonly nft?: NftRenderOptions | undefined;
}

/**
 * One door for both backends: a loaded command's plan goes to native nftables when it was loaded with
 * --native-nftables (or the CNI field native_nftables), to iptables-restore otherwise.
 */
export async function applyLoaded(runner: Runner, loaded: Engine, opts: ExecOptions, log: Logger): Promise<object> {
  return loaded.nft === undefined ? applyPlan(runner, loaded.plan, opts, log) : applyNftPlan(runner, loaded.plan, loaded.nft, log);
}

export async function cleanupLoaded(runner: Runner, loaded: Engine, opts: ExecOptions, log: Logger): Promise<object> {
  return loaded.nft === undefined ? cleanupPlan(runner, loaded.plan, opts, log) : cleanupNftPlan(runner, loaded.plan, loaded.nft.mode);
}

export async function checkLoaded(runner: Runner, loaded: Engine, opts: ExecOptions): Promise<Drift> {
  return loaded.nft === undefined ? checkPlan(runner, loaded.plan, opts) : checkNftPlan(runner, loaded.plan, loaded.nft);
}

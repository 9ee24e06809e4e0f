import type { AddressPlan, IpRulePlan, LocalRoutePlan, Plan } from '../model/plan.js';
import type { Family } from '../model/rule.js';
import type { DriftItem } from '../analyze/drift.js';
import type { Runner } from './runner.js';
import { ipBatchAccess } from './routes-ip.js';
import { ALL, NO_MASK, addressKey, ruleSelector, type RoutingAccess, type RoutingChange, type SeenRule } from './routes-model.js';
import { netlinkAccess } from './routes-netlink.js';

/**
 * Policy routing and addresses (TPROXY's `ip rule`/`ip route`, IPv6's `::6` on lo), idempotently: per family
 * one look and one change — rtnetlink in-process where the runner can (no process), else one `ip -batch` to
 * look and one to change. Both read into the same view and decide here, once. Istio adds duplicate rules on
 * re-runs and never removes any of them; meshcap adds what is missing and its cleanup removes exactly these.
 */

/** Ours: same mark and mask (none is all ones, as the kernel stores it), same table; the priority when the plan sets one. */
function ruleMatches(have: SeenRule, want: IpRulePlan): boolean {
  return have.fwmark === want.mark && (have.fwmask ?? NO_MASK) === (want.mask ?? NO_MASK) && have.table === want.table && (want.priority === undefined || have.priority === want.priority);
}

const planKey = (a: AddressPlan) => {
  const [addr = '', len = ''] = a.cidr.split('/');
  return addressKey(addr, Number(len));
};

interface FamilyRouting {
  family: Family;
  ipRules: IpRulePlan[];
  routes: LocalRoutePlan[];
  addresses: AddressPlan[];
}

function byFamily(plan: Plan): FamilyRouting[] {
  return plan.families
    .map((family) => ({
      family,
      ipRules: plan.ipRules.filter((r) => r.family === family),
      routes: plan.routes.filter((r) => r.family === family),
      addresses: plan.addresses.filter((a) => a.family === family),
    }))
    .filter((f) => f.ipRules.length + f.routes.length + f.addresses.length > 0);
}

/** rtnetlink in-process where the runner offers it (each call falls back to `ip` if it cannot be made), else `ip -batch`. */
function accessFor(runner: Runner): RoutingAccess {
  const ip = ipBatchAccess(runner);
  return runner.rtnetlink === undefined ? ip : netlinkAccess(runner, ip);
}

/** Adds what is missing. */
export async function applyRouting(runner: Runner, plan: Plan): Promise<void> {
  const access = accessFor(runner);
  for (const f of byFamily(plan)) {
    const changes: RoutingChange[] = [];
    if (f.ipRules.length > 0) {
      const seen = await access.read(f.family, []);
      for (const rule of f.ipRules) if (!seen.rules.some((h) => ruleMatches(h, rule))) changes.push({ kind: 'rule', op: 'add', rule });
    }
    for (const route of f.routes) changes.push({ kind: 'route', op: 'replace', route });
    for (const address of f.addresses) changes.push({ kind: 'address', op: 'replace', address });
    if (changes.length > 0) await access.change(f.family, changes);
  }
}

/** Removes exactly the plan's rules (every duplicate), routes and addresses where present. */
export async function removeRouting(runner: Runner, plan: Plan): Promise<void> {
  const access = accessFor(runner);
  for (const f of byFamily(plan)) {
    const seen = await access.read(f.family, f.routes.map((r) => r.table));
    const changes: RoutingChange[] = [];
    for (const rule of f.ipRules) for (const _ of seen.rules.filter((h) => ruleMatches(h, rule))) changes.push({ kind: 'rule', op: 'del', rule });
    for (const route of f.routes) if (seen.localDefault.has(route.table)) changes.push({ kind: 'route', op: 'del', route });
    for (const address of f.addresses) if (seen.loAddresses.has(planKey(address))) changes.push({ kind: 'address', op: 'del', address });
    if (changes.length > 0) await access.change(f.family, changes);
  }
}

/** What the plan routes that the namespace lacks (for --verify and CHECK), as drift items. */
export async function missingRouting(runner: Runner, plan: Plan): Promise<DriftItem[]> {
  const access = accessFor(runner);
  const missing: DriftItem[] = [];
  for (const f of byFamily(plan)) {
    const seen = await access.read(f.family, f.routes.map((r) => r.table));
    for (const r of f.ipRules) if (!seen.rules.some((h) => ruleMatches(h, r))) missing.push({ kind: 'ip rule', text: `${ruleSelector(r)} (${f.family})` });
    for (const r of f.routes) if (!seen.localDefault.has(r.table)) missing.push({ kind: 'route', text: `local ${ALL[f.family]} dev lo table ${r.table}` });
    for (const a of f.addresses) if (!seen.loAddresses.has(planKey(a))) missing.push({ kind: 'address', text: `${a.cidr} dev ${a.device}` });
  }
  return missing;
}

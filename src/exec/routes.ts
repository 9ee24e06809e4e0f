import { CommandError } from '../errors.js';
import type { AddressPlan, IpRulePlan, LocalRoutePlan, Plan } from '../model/plan.js';
import type { Family } from '../model/rule.js';
import type { DriftItem } from '../analyze/drift.js';
import { describeCommand, type Runner } from './runner.js';

/**
 * Policy routing and addresses (TPROXY's `ip rule`/`ip route`, IPv6's `::6` on lo), idempotently, with one
 * `ip -batch` to look and one to change per family. Istio adds duplicate rules on re-runs and never removes
 * any of them; meshcap adds what is missing and its cleanup removes exactly these.
 */

interface IpRuleJson {
  priority?: number;
  fwmark?: string;
  fwmask?: string;
  table?: string;
}
interface IpRouteJson {
  type?: string;
  dst?: string;
  dev?: string;
}
interface IpAddrJson {
  addr_info?: { local?: string; prefixlen?: number }[];
}

const hex = (n: number) => `0x${n.toString(16)}`;
const ALL = { ipv4: '0.0.0.0/0', ipv6: '::/0' } as const;
const famFlag = (f: Family) => (f === 'ipv6' ? ['-6'] : ['-4']);

function ruleSelector(r: IpRulePlan): string {
  const mark = r.mask === undefined ? hex(r.mark) : `${hex(r.mark)}/${hex(r.mask)}`;
  return `fwmark ${mark}${r.priority === undefined ? '' : ` priority ${r.priority}`} lookup ${r.table}`;
}

function ruleMatches(have: IpRuleJson, want: IpRulePlan): boolean {
  return (
    have.fwmark === hex(want.mark) &&
    (want.mask === undefined ? have.fwmask === undefined || have.fwmask === '0xffffffff' : have.fwmask === hex(want.mask)) &&
    have.table === String(want.table) &&
    (want.priority === undefined || have.priority === want.priority)
  );
}

interface Observed {
  rules: IpRuleJson[];
  routes: Map<number, IpRouteJson[]>;
  loAddresses: string[];
}

/** Runs `ip [-j] -batch -` for one family (`json`: a read; otherwise the lines change the namespace). */
export async function runBatch(runner: Runner, family: Family, lines: readonly string[], json: boolean): Promise<string> {
  const args = [...famFlag(family), ...(json ? ['-j'] : []), '-batch', '-'];
  const r = await runner.run('ip', args, { input: `${lines.join('\n')}\n`, ownerUserns: !json });
  if (r.exitCode !== 0) {
    throw new CommandError({ command: `${describeCommand('ip', args)} <<< ${lines.join('; ')}`, exitCode: r.exitCode, stderr: r.stderr, hint: /not up/.test(r.stderr) ? 'bring lo up in the namespace' : undefined });
  }
  return r.stdout;
}

async function observe(runner: Runner, family: Family, tables: readonly number[]): Promise<Observed> {
  const lines = ['rule show', ...tables.map((t) => `route show table ${t}`), 'address show dev lo'];
  const out = (await runBatch(runner, family, lines, true)).split('\n').filter((l) => l.startsWith('['));
  const parsed = out.map((l) => JSON.parse(l) as unknown[]);
  const routes = new Map(tables.map((t, i) => [t, (parsed[1 + i] ?? []) as IpRouteJson[]]));
  const lo = ((parsed[1 + tables.length] ?? []) as IpAddrJson[]).flatMap((a) => (a.addr_info ?? []).map((i) => `${i.local}/${i.prefixlen}`));
  return { rules: (parsed[0] ?? []) as IpRuleJson[], routes, loAddresses: lo };
}

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

const hasLocalDefault = (routes: IpRouteJson[] | undefined) => (routes ?? []).some((r) => r.type === 'local' && r.dst === 'default' && r.dev === 'lo');

/** Adds what is missing. */
export async function applyRouting(runner: Runner, plan: Plan): Promise<void> {
  for (const f of byFamily(plan)) {
    const lines: string[] = [];
    if (f.ipRules.length > 0) {
      const seen = await observe(runner, f.family, []);
      for (const r of f.ipRules) if (!seen.rules.some((h) => ruleMatches(h, r))) lines.push(`rule add ${ruleSelector(r)}`);
    }
    for (const r of f.routes) lines.push(`route replace local ${ALL[f.family]} dev lo table ${r.table}`);
    for (const a of f.addresses) lines.push(`address replace ${a.cidr} dev ${a.device}`);
    if (lines.length > 0) await runBatch(runner, f.family, lines, false);
  }
}

/** Removes exactly the plan's rules (every duplicate), routes and addresses where present. */
export async function removeRouting(runner: Runner, plan: Plan): Promise<void> {
  for (const f of byFamily(plan)) {
    const seen = await observe(runner, f.family, f.routes.map((r) => r.table));
    const lines: string[] = [];
    for (const r of f.ipRules) for (const _ of seen.rules.filter((h) => ruleMatches(h, r))) lines.push(`rule del ${ruleSelector(r)}`);
    for (const r of f.routes) if (hasLocalDefault(seen.routes.get(r.table))) lines.push(`route del local ${ALL[f.family]} dev lo table ${r.table}`);
    for (const a of f.addresses) if (seen.loAddresses.includes(a.cidr)) lines.push(`address del ${a.cidr} dev ${a.device}`);
    if (lines.length > 0) await runBatch(runner, f.family, lines, false);
  }
}

/** What the plan routes that the namespace lacks (for --verify and CHECK), as drift items. */
export async function missingRouting(runner: Runner, plan: Plan): Promise<DriftItem[]> {
  const missing: DriftItem[] = [];
  for (const f of byFamily(plan)) {
    const seen = await observe(runner, f.family, f.routes.map((r) => r.table));
    for (const r of f.ipRules) if (!seen.rules.some((h) => ruleMatches(h, r))) missing.push({ kind: 'ip rule', text: `${ruleSelector(r)} (${f.family})` });
    for (const r of f.routes) if (!hasLocalDefault(seen.routes.get(r.table))) missing.push({ kind: 'route', text: `local ${ALL[f.family]} dev lo table ${r.table}` });
    for (const a of f.addresses) if (!seen.loAddresses.includes(a.cidr)) missing.push({ kind: 'address', text: `${a.cidr} dev ${a.device}` });
  }
  return missing;
}

import { CommandError } from '../errors.js';
import type { Family } from '../model/rule.js';
import { addressKey, describeChange, type RoutingAccess, type SeenRouting, type SeenRule } from './routes-model.js';
import { describeCommand, type Runner } from './runner.js';

/**
 * Routing through `ip` (the fallback where the native calls are unavailable): one `ip -j -batch -` to look
 * and one `ip -batch -` to change, per family.
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

const famFlag = (f: Family) => (f === 'ipv6' ? ['-6'] : ['-4']);

/** Runs `ip [-j] -batch -` for one family (`json`: a read; otherwise the lines change the namespace). */
export async function runBatch(runner: Runner, family: Family, lines: readonly string[], json: boolean): Promise<string> {
  const args = [...famFlag(family), ...(json ? ['-j'] : []), '-batch', '-'];
  const r = await runner.run('ip', args, { input: `${lines.join('\n')}\n`, ownerUserns: !json });
  if (r.exitCode !== 0) {
    throw new CommandError({ command: `${describeCommand('ip', args)} <<< ${lines.join('; ')}`, exitCode: r.exitCode, stderr: r.stderr, hint: /not up/.test(r.stderr) ? 'bring lo up in the namespace' : undefined });
  }
  return r.stdout;
}

/** `ip` prints a table by its name from rt_tables where it has one. */
const TABLE_NAMES: Readonly<Record<string, number>> = { default: 253, main: 254, local: 255 };
const tableId = (t: string | undefined) => (t === undefined ? Number.NaN : /^\d+$/.test(t) ? Number(t) : (TABLE_NAMES[t] ?? Number.NaN));
const hexValue = (h: string | undefined) => (h === undefined ? undefined : Number(h.startsWith('0x') ? h : `0x${h}`));

/** `ip -j rule show` prints no mask when it is all ones, and the mark as `%#x`. */
function seenRule(r: IpRuleJson): SeenRule {
  const fwmark = hexValue(r.fwmark);
  const fwmask = hexValue(r.fwmask);
  return { table: tableId(r.table), priority: r.priority ?? 0, ...(fwmark === undefined ? {} : { fwmark }), ...(fwmask === undefined ? {} : { fwmask }) };
}

const isLocalDefault = (r: IpRouteJson) => r.type === 'local' && r.dst === 'default' && r.dev === 'lo';

async function read(runner: Runner, family: Family, tables: readonly number[]): Promise<SeenRouting> {
  const lines = ['rule show', ...tables.map((t) => `route show table ${t}`), 'address show dev lo'];
  const out = (await runBatch(runner, family, lines, true)).split('\n').filter((l) => l.startsWith('['));
  const parsed = out.map((l) => JSON.parse(l) as unknown[]);
  const localDefault = new Set(tables.filter((_, i) => ((parsed[1 + i] ?? []) as IpRouteJson[]).some(isLocalDefault)));
  const lo = ((parsed[1 + tables.length] ?? []) as IpAddrJson[]).flatMap((a) => (a.addr_info ?? []).map((i) => addressKey(i.local ?? '', i.prefixlen ?? -1)));
  return { rules: ((parsed[0] ?? []) as IpRuleJson[]).map(seenRule), localDefault, loAddresses: new Set(lo) };
}

/** Reads and changes routing with `ip -batch`. */
export function ipBatchAccess(runner: Runner): RoutingAccess {
  return {
    read: (family, tables) => read(runner, family, tables),
    async change(family, changes) {
      await runBatch(runner, family, changes.map((c) => describeChange(family, c)), false);
    },
  };
}

import { CommandError } from '../errors.js';
import { runBatch } from '../exec/routes-ip.js';
import type { Runner } from '../exec/runner.js';
import type { Family } from '../model/rule.js';

/** Policy routing and addresses of a namespace, as `ip -j` prints them (only the fields precheck reads). */
export interface IpRule {
  readonly fwmark?: string;
  readonly fwmask?: string;
  readonly table?: string;
}
export interface IpRoute {
  readonly type?: string;
  readonly dst?: string;
  readonly dev?: string;
  readonly table?: string;
}
export interface IpAddress {
  readonly ifname: string;
  readonly family: Family;
  readonly address: string;
  readonly scope: string;
}

export interface FamilyRouting {
  readonly rules: readonly IpRule[];
  readonly routes: readonly IpRoute[];
}

export interface Routing {
  readonly ipv4: FamilyRouting;
  readonly ipv6: FamilyRouting;
  readonly addresses: readonly IpAddress[];
}

function jsonLines(text: string): unknown[][] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('['))
    .map((l) => {
      const v: unknown = JSON.parse(l);
      return Array.isArray(v) ? v : [];
    });
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function pick<K extends string>(item: unknown, keys: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) {
    const v = str((item as Record<string, unknown> | null)?.[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

async function readFamily(runner: Runner, family: Family): Promise<FamilyRouting> {
  const [rules = [], routes = []] = jsonLines(await runBatch(runner, family, ['rule show', 'route show table all'], true));
  return { rules: rules.map((r) => pick(r, ['fwmark', 'fwmask', 'table'])), routes: routes.map((r) => pick(r, ['type', 'dst', 'dev', 'table'])) };
}

/** Parses `ip -j address show`: every address with its interface and scope. */
export function parseAddresses(json: string): IpAddress[] {
  const links: unknown = JSON.parse(json);
  if (!Array.isArray(links)) return [];
  return links.flatMap((link: unknown) => {
    const l = link as { ifname?: unknown; addr_info?: unknown } | null;
    const infos = Array.isArray(l?.addr_info) ? (l.addr_info as unknown[]) : [];
    return infos.flatMap((info) => {
      const a = pick(info, ['family', 'local', 'scope']);
      if (a.local === undefined || (a.family !== 'inet' && a.family !== 'inet6')) return [];
      return [{ ifname: str(l?.ifname) ?? '', family: a.family === 'inet6' ? ('ipv6' as const) : ('ipv4' as const), address: a.local, scope: a.scope ?? '' }];
    });
  });
}

/** ip rules, every routing table, and the addresses, in the runner's namespace. */
export async function readRouting(runner: Runner): Promise<Routing> {
  const [ipv4, ipv6, addr] = await Promise.all([readFamily(runner, 'ipv4'), readFamily(runner, 'ipv6'), runner.run('ip', ['-j', 'address', 'show'])]);
  if (addr.exitCode !== 0) throw new CommandError({ command: 'ip -j address show', exitCode: addr.exitCode, stderr: addr.stderr });
  return { ipv4, ipv6, addresses: parseAddresses(addr.stdout) };
}

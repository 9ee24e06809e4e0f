import { parseCidr, parseHostAddress, type Cidr } from '../model/cidr.js';
import type { Runner } from '../exec/runner.js';

/**
 * What a live trace reads besides the rules (src/inspect/namespace-rules.ts): `ipset save` and `ip route get`,
 * without changing anything. Every command goes through the caller's runner (which enters the namespace).
 */

/**
 * Members of the named sets from `ipset save` (`add NAME MEMBER …`); a set with members trace cannot read as
 * addresses (hash:ip,port, …) is left out, so a match on it stays unknown. Undefined when ipset cannot run.
 */
export async function readSetMembers(runner: Runner, names: readonly string[]): Promise<Map<string, Cidr[]> | undefined> {
  if (names.length === 0) return new Map();
  const r = await runner.run('ipset', ['save']);
  if (r.exitCode !== 0) return undefined;
  const sets = new Map<string, Cidr[]>();
  const unreadable = new Set<string>();
  for (const line of r.stdout.split('\n')) {
    const [verb, name = '', member = ''] = line.trim().split(/\s+/);
    if (verb === 'create' && names.includes(name)) sets.set(name, sets.get(name) ?? []);
    if (verb !== 'add' || !names.includes(name)) continue;
    const p = member.includes('/') ? parseCidr(member) : parseHostAddress(member);
    if (p.ok) sets.set(name, [...(sets.get(name) ?? []), p.value]);
    else unreadable.add(name);
  }
  for (const n of unreadable) sets.delete(n);
  return sets;
}

export interface RouteChoice {
  readonly dev: string;
  readonly src: Cidr | undefined;
  readonly local: boolean;
}

interface RouteJson {
  type?: string;
  dev?: string;
  prefsrc?: string;
}

/** What `ip route get DST mark M uid U` picks in the namespace: device, source, whether DST is local. */
export async function routeGet(runner: Runner, dst: string, mark: number, uid: number): Promise<RouteChoice | undefined> {
  const r = await runner.run('ip', ['-j', 'route', 'get', dst, 'mark', String(mark), 'uid', String(uid)]);
  if (r.exitCode !== 0) return undefined;
  const [route] = JSON.parse(r.stdout) as RouteJson[];
  if (route?.dev === undefined) return undefined;
  const src = route.prefsrc === undefined ? undefined : parseHostAddress(route.prefsrc);
  return { dev: route.dev, src: src?.ok ? src.value : undefined, local: route.type === 'local' };
}

import { CommandError } from '../errors.js';
import { parseCidr, parseHostAddress, type Cidr, type Family } from '../model/cidr.js';
import { binaryName, hintFor, type Backend } from '../exec/detect.js';
import type { Runner } from '../exec/runner.js';
import { parseSaveText } from './save-text.js';
import type { Ruleset } from './types.js';

/**
 * Reading a namespace's live state without changing it and without a lock: `*-save` of both backends, `ipset
 * save`, `ip route get`. Every command goes through the caller's runner (which enters the namespace).
 */

export interface LiveRules {
  readonly ruleset: Ruleset;
  readonly backend: Backend;
  /** Both backends hold rules in this family (the kernel runs both); the walk covers `backend`'s. */
  readonly alsoHeld: Backend | undefined;
}

/** A save text holds rules: a rule anywhere, or a builtin chain whose policy is not ACCEPT. */
export function holdsRules(rs: Ruleset): boolean {
  return rs.tables.some((t) => t.rules.length > 0 || t.chains.some((c) => c.policy !== undefined && c.policy !== 'ACCEPT'));
}

/** One family's rules from whichever backend holds them (legacy first, as the apply path chooses). */
export async function readLiveRules(runner: Runner, family: Family): Promise<LiveRules> {
  const [legacy, nft] = await Promise.all((['legacy', 'nft'] as const).map((b) => runner.run(binaryName(family, b, 'save'), [])));
  const parsed = (r: typeof legacy) => (r !== undefined && r.exitCode === 0 ? parseSaveText(r.stdout) : undefined);
  const l = parsed(legacy);
  const n = parsed(nft);
  const lHolds = l !== undefined && holdsRules(l);
  const nHolds = n !== undefined && holdsRules(n);
  if (l !== undefined && lHolds) return { ruleset: l, backend: 'legacy', alsoHeld: nHolds ? 'nft' : undefined };
  if (n !== undefined) return { ruleset: n, backend: 'nft', alsoHeld: undefined };
  if (l !== undefined) return { ruleset: l, backend: 'legacy', alsoHeld: undefined };
  const plain = await runner.run(binaryName(family, 'plain', 'save'), []);
  const cmd = binaryName(family, 'plain', 'save');
  if (plain.exitCode !== 0) throw new CommandError({ command: cmd, exitCode: plain.exitCode, stderr: plain.stderr || (nft?.stderr ?? ''), hint: hintFor(plain, cmd) });
  return { ruleset: parseSaveText(plain.stdout), backend: 'plain', alsoHeld: undefined };
}

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

import { CommandError } from '../errors.js';
import type { Plan } from '../model/plan.js';
import { hintFor } from './detect.js';
import type { Runner } from './runner.js';

async function ipsetRestore(runner: Runner, lines: readonly string[]): Promise<void> {
  if (lines.length === 0) return;
  const r = await runner.run('ipset', ['-exist', 'restore'], { input: `${lines.join('\n')}\n`, ownerUserns: true });
  if (r.exitCode !== 0) {
    const hint = hintFor(r, 'ipset') ?? (/in use by a kernel component/.test(r.stderr) ? 'a rule that is not ours still uses the set' : undefined);
    throw new CommandError({ command: `ipset -exist restore <<< ${lines.join('; ')}`, exitCode: r.exitCode, stderr: r.stderr, hint });
  }
}

/**
 * Creates the plan's ipsets if missing (`hash:ip`, with comments, as Istio's agent makes them) and adds or
 * removes members, in one `ipset -exist restore`: idempotent, and a missing member is not an error.
 */
export async function applyIpsets(runner: Runner, plan: Plan): Promise<void> {
  const lines = plan.ipsets.flatMap((s) => [
    `create ${s.name} hash:ip family ${s.family === 'ipv4' ? 'inet' : 'inet6'} comment`,
    ...s.add.map((m) => `add ${s.name} ${m.ip}${m.comment === undefined ? '' : ` comment "${m.comment}"`}`),
    ...s.remove.map((ip) => `del ${s.name} ${ip}`),
  ]);
  await ipsetRestore(runner, lines);
}

/** Destroys the plan's ipsets (after the rules that use them are gone); absent sets are fine. */
export async function destroyIpsets(runner: Runner, plan: Plan): Promise<void> {
  await ipsetRestore(runner, plan.ipsets.map((s) => `destroy ${s.name}`));
}

/** The members `ipset save` lists: set, address and (when there is one) the comment. Pure. */
export function parseIpsetMembers(saved: string): { set: string; ip: string; comment: string | undefined }[] {
  return saved.split('\n').flatMap((line) => {
    const m = /^add (\S+) (\S+)(?: comment "([^"]*)")?/.exec(line);
    return m ? [{ set: m[1] ?? '', ip: m[2] ?? '', comment: m[3] }] : [];
  });
}

/** The members of every set on the node (`ipset save`); empty when ipset cannot list (no sets, no module). */
export async function readIpsetMembers(runner: Runner): Promise<ReturnType<typeof parseIpsetMembers>> {
  const saved = await runner.run('ipset', ['save']);
  return saved.exitCode === 0 ? parseIpsetMembers(saved.stdout) : [];
}

/**
 * CNI GC: removes members of the plan's sets whose comment names an attachment (`<containerID>/<ifname>`)
 * that is not in `valid`. Members without such a comment (added by hand or by `ambient-host`) stay.
 */
export async function collectIpsetGarbage(runner: Runner, plan: Plan, valid: ReadonlySet<string>): Promise<string[]> {
  const names = new Set(plan.ipsets.map((s) => s.name));
  const stale = (await readIpsetMembers(runner))
    .filter((m) => names.has(m.set) && (m.comment ?? '').includes('/') && !valid.has(m.comment ?? ''))
    .map((m) => `del ${m.set} ${m.ip}`);
  await ipsetRestore(runner, stale);
  return stale;
}

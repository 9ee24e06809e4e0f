import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { execa } from 'execa';

/**
 * Throwaway network namespaces for root tests. Names are unique per test (`mct-<hex>`), and every
 * namespace made here is deleted in `finally`, also when the test fails. The machine's own namespace is
 * never touched: every command runs through `ip netns exec <ours>`.
 */
export function requireRoot(): void {
  if (process.getuid?.() !== 0) {
    throw new Error('this suite creates network namespaces and needs root (CI runs it as root)');
  }
}

export function uniqueName(prefix = 'mct'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export interface Netns {
  readonly name: string;
  readonly path: string;
  /** Runs a command inside the namespace; rejects on non-zero exit. */
  run(cmd: string, args: readonly string[], opts?: { input?: string }): Promise<{ stdout: string; stderr: string }>;
  /** Same, but resolves with the exit code instead of rejecting. */
  tryRun(cmd: string, args: readonly string[], opts?: { input?: string }): Promise<{ exitCode: number; stdout: string; stderr: string }>;
}

/**
 * A pod with its own user namespace (Kubernetes `hostUsers: false`), as containerd makes it: pod uids
 * 0..65535 are host uids 200000.., the network namespace is owned by that user namespace and pinned by a
 * bind mount under /run/netns, and no process is left in it.
 */
export const USERNS_BASE = 200_000;

async function addUsernsNetns(name: string): Promise<void> {
  // `ip netns add` makes /run/netns a shared bind mount of itself the first time it runs on a machine; a pin
  // made before that would end up under it, hidden from `ip netns` and never removed. Let ip set it up first.
  const setup = uniqueName('mcsetup');
  await execa('ip', ['netns', 'add', setup]);
  await execa('ip', ['netns', 'del', setup]);
  const holder = execa('unshare', ['--user', '--net', '--', 'sleep', '30'], { reject: false });
  try {
    const pid = holder.pid;
    if (pid === undefined) throw new Error('unshare did not start');
    // Once unshare has exec'd sleep, the process is in its new namespaces; then root writes the id maps.
    for (let i = 0; i < 300 && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'sleep'; i++) await new Promise((r) => setTimeout(r, 10));
    writeFileSync(`/proc/${pid}/uid_map`, `0 ${USERNS_BASE} 65536\n`);
    writeFileSync(`/proc/${pid}/gid_map`, `0 ${USERNS_BASE} 65536\n`);
    await execa('touch', [`/run/netns/${name}`]);
    await execa('mount', ['--bind', `/proc/${pid}/ns/net`, `/run/netns/${name}`]);
  } catch (err) {
    await execa('ip', ['netns', 'del', name], { reject: false });
    throw err;
  } finally {
    holder.kill('SIGKILL');
    await holder;
  }
}

export async function createNetns(prefix?: string, opts: { userns?: boolean } = {}): Promise<Netns> {
  const name = uniqueName(prefix);
  if (opts.userns === true) await addUsernsNetns(name);
  else await execa('ip', ['netns', 'add', name]);
  const tryRun: Netns['tryRun'] = async (cmd, args, opts = {}) => {
    const r = await execa('ip', ['netns', 'exec', name, cmd, ...args], { input: opts.input ?? '', reject: false });
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  return {
    name,
    path: `/run/netns/${name}`,
    tryRun,
    async run(cmd, args, opts) {
      const r = await tryRun(cmd, args, opts);
      if (r.exitCode !== 0) throw new Error(`${cmd} ${args.join(' ')} in ${name} exited ${r.exitCode}: ${r.stderr}`);
      return r;
    },
  };
}

export async function deleteNetns(ns: Netns | undefined): Promise<void> {
  if (ns) await execa('ip', ['netns', 'del', ns.name], { reject: false });
}

/** Runs `fn` with a fresh namespace that is removed afterwards whatever happens. */
export async function withNetns<T>(fn: (ns: Netns) => Promise<T>, prefix?: string): Promise<T> {
  const ns = await createNetns(prefix);
  try {
    return await fn(ns);
  } finally {
    await deleteNetns(ns);
  }
}

/**
 * Namespaces made during one test, lo up, all removed in the suite's afterEach (`removeAll`), also when the
 * test failed.
 */
export function netnsPool(): { make: (prefix: string) => Promise<Netns>; removeAll: () => Promise<void> } {
  const made: Netns[] = [];
  return {
    async make(prefix) {
      const n = await createNetns(prefix);
      made.push(n);
      await n.run('ip', ['link', 'set', 'lo', 'up']);
      return n;
    },
    async removeAll() {
      await Promise.all(made.splice(0).map((n) => deleteNetns(n)));
    },
  };
}

/** iptables-save output without its `#` comment lines, split into tables keyed by `*name`. */
export function saveTables(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    current.push(line);
    if (line === 'COMMIT') {
      out.set(current[0] ?? '', current.join('\n'));
      current = [];
    }
  }
  return out;
}

/** Splits a save-format dry-run into the text of each family. */
export function splitDryRunFamilies(text: string): { ipv4: string; ipv6: string } {
  const [, v4 = '', v6 = ''] = text.split(/^# ip6?tables-save$/m);
  return { ipv4: v4.trim(), ipv6: v6.trim() };
}

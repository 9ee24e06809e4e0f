import { resolve } from 'node:path';
import { execa } from 'execa';
import { expect } from 'vitest';
import type { Netns } from './netns.js';
import { entryCommand, REPO_ROOT } from './paths.js';

const HOLD = resolve(REPO_ROOT, 'test', 'fixtures', 'hold.py');
const PYTHON = '/usr/bin/python3';

export interface Holder {
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Processes in a namespace with a chosen uid, gid and comm, holding sockets (`tcp:0.0.0.0:8080`). Every one
 * is tracked by PID and killed by `stopAll()` (in afterEach/afterAll), also when a test fails.
 */
export class Holders {
  private readonly running = new Map<number, { kill: () => void; done: Promise<unknown> }>();

  async start(ns: Netns, who: { uid: number; gid: number; comm: string }, sockets: readonly string[] = []): Promise<Holder> {
    const user = who.uid === 0 && who.gid === 0 ? [] : ['setpriv', `--reuid=${who.uid}`, `--regid=${who.gid}`, '--clear-groups'];
    const proc = execa('ip', ['netns', 'exec', ns.name, ...user, PYTHON, HOLD, who.comm, ...sockets], { reject: false, buffer: false, stdin: 'ignore' });
    const pid = proc.pid;
    if (pid === undefined) throw new Error(`${who.comm} did not start`);
    this.running.set(pid, { kill: () => proc.kill('SIGKILL'), done: proc });
    await new Promise<void>((ok, fail) => {
      let out = '';
      proc.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('READY')) ok();
      });
      proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      void proc.then(() => fail(new Error(`${who.comm} exited: ${out}`)));
    });
    return { pid, stop: () => this.stop(pid) };
  }

  async stop(pid: number): Promise<void> {
    const proc = this.running.get(pid);
    if (proc === undefined) return;
    this.running.delete(pid);
    proc.kill();
    await proc.done;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.running.keys()].map((pid) => this.stop(pid)));
  }
}

/** Waits until IPv6 duplicate address detection is over (link-local addresses and their routes appear then). */
export async function settleIpv6(ns: Netns): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await ns.run('ip', ['-6', 'address', 'show', 'tentative'])).stdout.trim() === '') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`IPv6 addresses in ${ns.name} stayed tentative`);
}

/** Everything precheck could change, as text: rules of every backend and family, nft, ip rules, routes, addresses. */
export async function snapshotNamespace(ns: Netns): Promise<string> {
  const cmds: string[][] = [
    ['iptables-legacy-save'], ['iptables-nft-save'], ['ip6tables-legacy-save'], ['ip6tables-nft-save'], ['nft', '-s', 'list', 'ruleset'],
    ['ip', '-4', 'rule'], ['ip', '-6', 'rule'], ['ip', '-4', 'route', 'show', 'table', 'all'], ['ip', '-6', 'route', 'show', 'table', 'all'], ['ip', 'address'],
  ];
  const outs = await Promise.all(cmds.map(async ([cmd = '', ...args]) => `$ ${cmd} ${args.join(' ')}\n${(await ns.tryRun(cmd, args)).stdout}`));
  // The save headers carry the time of the save, and chain counters count packets (a peer's IPv6 router
  // solicitation) that precheck has nothing to do with.
  return outs.join('\n').replace(/^# (Generated|Completed) .*$/gm, '').replace(/ \[\d+:\d+\]$/gm, ' [-]');
}

export interface PrecheckRun {
  readonly exitCode: number;
  readonly codes: string[];
  readonly findings: { code: string; severity: string; message: string; port?: number; pid?: number }[];
}

/**
 * Runs the built `meshcap precheck --json` against the namespace, and checks that it changed nothing there:
 * the namespace's rules, routes and addresses are byte-identical before and after.
 */
export async function precheck(ns: Netns, args: readonly string[] = []): Promise<PrecheckRun> {
  const before = await snapshotNamespace(ns);
  const { file, args: pre } = entryCommand();
  const r = await execa(file, [...pre, 'precheck', '--json', '--netns', ns.path, ...args], { reject: false });
  expect(await snapshotNamespace(ns)).toBe(before);
  if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`precheck exited ${r.exitCode}: ${r.stderr}`);
  const { findings } = JSON.parse(r.stdout) as { findings: PrecheckRun['findings'] };
  return { exitCode: r.exitCode ?? -1, codes: [...new Set(findings.map((f) => f.code))].sort(), findings };
}

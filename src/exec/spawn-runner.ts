import { spawn, type ChildProcessWithoutNullStreams, type StdioOptions } from 'node:child_process';
import { closeSync } from 'node:fs';
import { EnvironmentError } from '../errors.js';
import { exchangeRoute, findNamespaceOwner, probeNamespace, startInNetns, type NamespaceOwner } from './native.js';
import { NOT_FOUND, type RunResult, type Runner } from './runner.js';

/** How one command is started: the file, its argv, and an fd it inherits as its fd 3 (the owning user namespace). */
interface Launch {
  readonly file: string;
  readonly argv: readonly string[];
  readonly userns?: number;
  /** Born in this network namespace: the JS thread enters it for the fork (no nsenter); nsenter if that fails. */
  readonly netns?: string;
}

/**
 * The production runner: the runtime's own spawn (node:child_process under Node, Bun.spawnSync in the
 * executable; execa cost ~28 ms to load and ~6 ms more per command, so it stays in the test harness),
 * optionally inside a network namespace: the child is born there — the JS thread enters the namespace
 * (setns, src/exec/native.ts) for the fork and leaves it again — or, where that cannot be done, through
 * `nsenter --net=<path>` (which execs the command: no extra process either). A failing command is a result;
 * only a namespace that cannot be entered throws (EnvironmentError).
 *
 * A namespace owned by another user namespace (Kubernetes `hostUsers: false`): the kernel refuses owner
 * matches written from any user namespace but the owner's, so those commands run as `nsenter --user=<owner>`
 * — the owner found from the namespace itself (NS_GET_USERNS, src/exec/native.ts), handed to nsenter as its
 * fd 3. UIDs in the rules then mean the pod's UIDs, as istio-init inside the pod would write them. The owner
 * is looked up once, at the first such command; plain reads never look.
 */
export function createSpawnRunner(netns?: string): Runner {
  let owner: Promise<NamespaceOwner> | undefined;
  const launchFor = async (cmd: string, args: readonly string[], inOwner: boolean): Promise<Launch> => {
    if (netns === undefined) return { file: cmd, argv: args };
    const plain = { file: cmd, argv: args, netns };
    if (!inOwner) return plain;
    const o = await (owner ??= ownerOf(netns));
    if (o.kind !== 'foreign') return plain;
    try {
      return { file: 'nsenter', argv: ['--user=/proc/self/fd/3', '--', cmd, ...args], userns: o.open(), netns };
    } catch (err) {
      throw new EnvironmentError(`${netns} belongs to another user namespace (${o.id}, a pod with hostUsers: false) and meshcap cannot enter it: ${(err as Error).message}`);
    }
  };
  return {
    probe: () => probeNamespace(netns),
    // Routing needs no user namespace: its rules carry no UIDs, and root on the node has CAP_NET_ADMIN over
    // a pod's namespace owned by a user namespace of its own (test/netns/userns.test.ts).
    rtnetlink: (requests) => exchangeRoute(netns, requests),
    async run(cmd, args, opts = {}) {
      const launch = await launchFor(cmd, args, opts.ownerUserns === true);
      // Legacy iptables tables are per namespace, so the xtables lock is too (as Istio's CNI does): pods set
      // up at once never queue on one host-wide lock. The namespace file is readable from the pod's user
      // namespace, where the node's /run/xtables.lock is not.
      const env = { ...process.env, LC_ALL: 'C', ...(netns === undefined ? {} : { XTABLES_LOCKFILE: netns }) };
      const execute = BUN === undefined ? executeNode : executeBun(BUN);
      let pending: Promise<RunResult> | undefined;
      try {
        const start = (file: string, argv: readonly string[]) => execute(file, argv, { env, input: opts.input ?? '', userns: launch.userns });
        if (launch.netns !== undefined) pending = (await startInNetns(launch.netns, () => ({ child: start(launch.file, launch.argv) })))?.child;
        // nsenter: where the thread cannot enter (no native calls, or refused) — it names what went wrong.
        pending ??= launch.netns === undefined ? start(launch.file, launch.argv) : start('nsenter', [`--net=${launch.netns}`, '--', launch.file, ...launch.argv]);
      } finally {
        if (launch.userns !== undefined) closeSync(launch.userns);
      }
      const result = await pending;
      if (netns !== undefined && result.exitCode !== 0 && /^nsenter: (reassociate to namespace|cannot open)/m.test(result.stderr)) {
        const line = result.stderr.split('\n').find((l) => l.startsWith('nsenter:')) ?? result.stderr;
        throw new EnvironmentError(`${netns} is not a network namespace meshcap can enter (--netns): ${line}`);
      }
      return result;
    },
  };
}

interface Execution {
  readonly env: NodeJS.ProcessEnv;
  readonly input: string;
  /** Handed to the child as its fd 3. */
  readonly userns: number | undefined;
}

/** Starts the child now (the fork happens before this returns: a caller inside a namespace has it born there). */
type Execute = (file: string, argv: readonly string[], x: Execution) => Promise<RunResult>;

const notFound = (file: string): RunResult => ({ exitCode: NOT_FOUND, stdout: '', stderr: `${file}: command not found` });

/** Node: child_process, streams collected. */
const executeNode: Execute = (file, argv, x) => {
  const stdio: StdioOptions = ['pipe', 'pipe', 'pipe', ...(x.userns === undefined ? [] : [x.userns])];
  const child = spawn(file, argv, { env: x.env, stdio }) as ChildProcessWithoutNullStreams;
  return new Promise<RunResult>((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.stdin.on('error', () => undefined);
    child.on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ENOENT' ? notFound(file) : { exitCode: -1, stdout: '', stderr: e.message }));
    child.on('close', (code, signal) => resolve({ exitCode: code ?? (signal ? 128 : -1), stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(x.input);
  });
};

/** The part of Bun's own API the runner uses (Bun's types are not a dependency). */
interface BunSpawn {
  spawnSync(opts: { cmd: string[]; env: NodeJS.ProcessEnv; stdio: unknown[] }): { exitCode: number | null; signalCode?: string | null; stdout?: Uint8Array | null; stderr?: Uint8Array | null };
}
const BUN = (globalThis as { Bun?: BunSpawn }).Bun;
const text = (b: Uint8Array | null | undefined) => (b === undefined || b === null ? '' : Buffer.from(b).toString('utf8'));

/**
 * The executable: Bun.spawnSync, which starts and reaps a child in ~1 ms where Bun's node:child_process
 * takes ~4 ms (it builds Node-style stream objects for every pipe). Synchronous is what a one-shot run on the
 * pod start path does anyway; the agent's sweeps run one command at a time.
 */
const executeBun =
  (bun: BunSpawn): Execute =>
  (file, argv, x) => {
    let result: RunResult;
    try {
      const r = bun.spawnSync({ cmd: [file, ...argv], env: x.env, stdio: [Buffer.from(x.input, 'utf8'), 'pipe', 'pipe', ...(x.userns === undefined ? [] : [x.userns])] });
      result = { exitCode: r.exitCode ?? (r.signalCode ? 128 : -1), stdout: text(r.stdout), stderr: text(r.stderr) };
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      result = e.code === 'ENOENT' || /ENOENT|No such file/.test(e.message) ? notFound(file) : { exitCode: -1, stdout: '', stderr: e.message };
    }
    // One turn of the event loop before the caller goes on: a SIGTERM that arrived while the child ran is
    // handled now, so the apply stops after this transaction and rolls back, as with an asynchronous child.
    return new Promise<RunResult>((resolve) => setImmediate(() => resolve(result)));
  };

/** The namespace's owner; a path that cannot be opened is left to nsenter, which names the problem. */
async function ownerOf(netns: string): Promise<NamespaceOwner> {
  try {
    return await findNamespaceOwner(netns);
  } catch (err) {
    return { kind: 'unknown', why: (err as Error).message };
  }
}

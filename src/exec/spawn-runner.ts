import { spawn, type ChildProcessWithoutNullStreams, type StdioOptions } from 'node:child_process';
import { closeSync } from 'node:fs';
import { EnvironmentError } from '../errors.js';
import { findNamespaceOwner, probeNamespace, startInNetns, type NamespaceOwner } from './native.js';
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
 * The production runner: node:child_process directly, optionally inside a network namespace: the child is
 * born there — the JS thread enters the namespace (setns, src/exec/native.ts) for the fork and leaves it
 * again — or, where that cannot be done, through `nsenter --net=<path>` (which execs the command: no extra
 * process either). Measured on the pod start path, execa
 * cost ~28 ms to load and ~6 ms more per command than a bare spawn — more than the iptables-restore it runs —
 * so it stays in the test harness only. A failing command is a result; only a namespace that cannot be
 * entered throws (EnvironmentError).
 *
 * A namespace owned by another user namespace (Kubernetes `hostUsers: false`): the kernel refuses owner
 * matches written from any user namespace but the owner's, so writes run as `nsenter --user=<owner> --net=…`
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
    async run(cmd, args, opts = {}) {
      const launch = await launchFor(cmd, args, opts.ownerUserns === true);
      // Legacy iptables tables are per namespace, so the xtables lock is too (as Istio's CNI does): pods set
      // up at once never queue on one host-wide lock. The namespace file is readable from the pod's user
      // namespace, where the node's /run/xtables.lock is not.
      const env = { ...process.env, LC_ALL: 'C', ...(netns === undefined ? {} : { XTABLES_LOCKFILE: netns }) };
      const stdio: StdioOptions = ['pipe', 'pipe', 'pipe', ...(launch.userns === undefined ? [] : [launch.userns])];
      const start = (file: string, argv: readonly string[]) => spawn(file, argv, { env, stdio }) as ChildProcessWithoutNullStreams;
      let child: ChildProcessWithoutNullStreams | undefined;
      try {
        if (launch.netns !== undefined) child = await startInNetns(launch.netns, () => start(launch.file, launch.argv));
        // nsenter: where the thread cannot enter (no native calls, or refused) — it names what went wrong.
        child ??= launch.netns === undefined ? start(launch.file, launch.argv) : start('nsenter', [`--net=${launch.netns}`, '--', launch.file, ...launch.argv]);
      } finally {
        if (launch.userns !== undefined) closeSync(launch.userns);
      }
      const proc = child;
      return new Promise<RunResult>((resolve, reject) => {
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        proc.stdout.on('data', (d: Buffer) => out.push(d));
        proc.stderr.on('data', (d: Buffer) => err.push(d));
        proc.stdin.on('error', () => undefined);
        proc.on('error', (e: NodeJS.ErrnoException) => {
          resolve({ exitCode: e.code === 'ENOENT' ? NOT_FOUND : -1, stdout: '', stderr: e.code === 'ENOENT' ? `${launch.file}: command not found` : e.message });
        });
        proc.on('close', (code, signal) => {
          const stderr = Buffer.concat(err).toString('utf8');
          const result = { exitCode: code ?? (signal ? 128 : -1), stdout: Buffer.concat(out).toString('utf8'), stderr };
          if (netns !== undefined && result.exitCode !== 0 && /^nsenter: (reassociate to namespace|cannot open)/m.test(stderr)) {
            const line = stderr.split('\n').find((l) => l.startsWith('nsenter:')) ?? stderr;
            reject(new EnvironmentError(`${netns} is not a network namespace meshcap can enter (--netns): ${line}`));
            return;
          }
          resolve(result);
        });
        proc.stdin.end(opts.input ?? '');
      });
    },
  };
}

/** The namespace's owner; a path that cannot be opened is left to nsenter, which names the problem. */
async function ownerOf(netns: string): Promise<NamespaceOwner> {
  try {
    return await findNamespaceOwner(netns);
  } catch (err) {
    return { kind: 'unknown', why: (err as Error).message };
  }
}

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync } from 'node:fs';
import { EnvironmentError } from '../errors.js';
import { findNamespaceOwner, probeNamespace, type NamespaceOwner } from './native.js';
import { NOT_FOUND, type RunResult, type Runner } from './runner.js';

/** How one command is started: the file, its argv, and an fd it inherits as its fd 3 (the owning user namespace). */
interface Launch {
  readonly file: string;
  readonly argv: readonly string[];
  readonly userns?: number;
}

/**
 * The production runner: node:child_process directly, optionally inside a network namespace via
 * `nsenter --net=<path>` (which execs the command: no extra process). Measured on the pod start path, execa
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
    const plain = { file: 'nsenter', argv: [`--net=${netns}`, '--', cmd, ...args] };
    if (!inOwner) return plain;
    const o = await (owner ??= ownerOf(netns));
    if (o.kind !== 'foreign') return plain;
    try {
      return { file: 'nsenter', argv: ['--user=/proc/self/fd/3', `--net=${netns}`, '--', cmd, ...args], userns: o.open() };
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
      return new Promise<RunResult>((resolve, reject) => {
        const child = spawn(launch.file, launch.argv, { env, stdio: ['pipe', 'pipe', 'pipe', ...(launch.userns === undefined ? [] : [launch.userns])] }) as ChildProcessWithoutNullStreams;
        if (launch.userns !== undefined) closeSync(launch.userns);
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        child.stdout.on('data', (d: Buffer) => out.push(d));
        child.stderr.on('data', (d: Buffer) => err.push(d));
        child.stdin.on('error', () => undefined);
        child.on('error', (e: NodeJS.ErrnoException) => {
          resolve({ exitCode: e.code === 'ENOENT' ? NOT_FOUND : -1, stdout: '', stderr: e.code === 'ENOENT' ? `${launch.file}: command not found` : e.message });
        });
        child.on('close', (code, signal) => {
          const stderr = Buffer.concat(err).toString('utf8');
          const result = { exitCode: code ?? (signal ? 128 : -1), stdout: Buffer.concat(out).toString('utf8'), stderr };
          if (netns !== undefined && result.exitCode !== 0 && /^nsenter: (reassociate to namespace|cannot open)/m.test(stderr)) {
            const line = stderr.split('\n').find((l) => l.startsWith('nsenter:')) ?? stderr;
            reject(new EnvironmentError(`${netns} is not a network namespace meshcap can enter (--netns): ${line}`));
            return;
          }
          resolve(result);
        });
        child.stdin.end(opts.input ?? '');
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

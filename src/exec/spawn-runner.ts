import { spawn } from 'node:child_process';
import { EnvironmentError } from '../errors.js';
import { NOT_FOUND, type RunResult, type Runner } from './runner.js';

/**
 * The production runner: node:child_process directly, optionally inside a network namespace via
 * `nsenter --net=<path>` (which execs the command: no extra process). Measured on the pod start path, execa
 * cost ~28 ms to load and ~6 ms more per command than a bare spawn — more than the iptables-restore it runs —
 * so it stays in the test harness only. A failing command is a result; only a namespace that cannot be
 * entered throws (EnvironmentError).
 */
export function createSpawnRunner(netns?: string): Runner {
  return {
    run(cmd, args, opts = {}) {
      const [file, argv] = netns === undefined ? [cmd, [...args]] : ['nsenter', [`--net=${netns}`, '--', cmd, ...args]];
      // Legacy iptables tables are per namespace, so the xtables lock is too (as Istio's CNI does): pods set
      // up at once never queue on one host-wide lock.
      const env = { ...process.env, LC_ALL: 'C', ...(netns === undefined ? {} : { XTABLES_LOCKFILE: netns }) };
      return new Promise<RunResult>((resolve, reject) => {
        const child = spawn(file, argv, { env, stdio: ['pipe', 'pipe', 'pipe'] });
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        child.stdout.on('data', (d: Buffer) => out.push(d));
        child.stderr.on('data', (d: Buffer) => err.push(d));
        child.stdin.on('error', () => undefined);
        child.on('error', (e: NodeJS.ErrnoException) => {
          resolve({ exitCode: e.code === 'ENOENT' ? NOT_FOUND : -1, stdout: '', stderr: e.code === 'ENOENT' ? `${file}: command not found` : e.message });
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

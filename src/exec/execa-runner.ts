import { execa } from 'execa';
import { EnvironmentError } from '../errors.js';
import { NOT_FOUND, type Runner } from './runner.js';

/**
 * Runs commands with execa, optionally inside a network namespace via `nsenter --net=<path>` (which execs
 * the command, so it costs no extra process). A failing command is a result; only a namespace that cannot be
 * entered throws (EnvironmentError).
 */
export function createExecaRunner(netns?: string): Runner {
  return {
    async run(cmd, args, opts = {}) {
      const [file, argv] = netns === undefined ? [cmd, [...args]] : ['nsenter', [`--net=${netns}`, '--', cmd, ...args]];
      // Legacy iptables tables are per namespace, so the xtables lock is too (as Istio's CNI does): pods
      // set up at once never queue on one host-wide lock.
      const env = netns === undefined ? { LC_ALL: 'C' } : { LC_ALL: 'C', XTABLES_LOCKFILE: netns };
      const r = await execa(file, argv, { input: opts.input ?? '', reject: false, stripFinalNewline: false, env });
      if (r.failed && r.exitCode === undefined) {
        const missing = (r as { code?: string }).code === 'ENOENT';
        return { exitCode: missing ? NOT_FOUND : -1, stdout: r.stdout, stderr: missing ? `${file}: command not found` : (r.stderr || r.shortMessage) ?? '' };
      }
      if (netns !== undefined && r.exitCode !== 0 && /^nsenter: (reassociate to namespace|cannot open)/m.test(r.stderr)) {
        const line = r.stderr.split('\n').find((l) => l.startsWith('nsenter:')) ?? r.stderr;
        throw new EnvironmentError(`${netns} is not a network namespace meshcap can enter (--netns): ${line}`);
      }
      return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
  };
}

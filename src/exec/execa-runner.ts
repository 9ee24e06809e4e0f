import { execa } from 'execa';
import { NOT_FOUND, type Runner } from './runner.js';

/**
 * Runs commands with execa, optionally inside a network namespace via `nsenter --net=<path>` (which execs
 * the command, so it costs no extra process). Never throws for a failing command.
 */
export function createExecaRunner(netns?: string): Runner {
  return {
    async run(cmd, args, opts = {}) {
      const [file, argv] = netns === undefined ? [cmd, [...args]] : ['nsenter', [`--net=${netns}`, '--', cmd, ...args]];
      const r = await execa(file, argv, { input: opts.input ?? '', reject: false, stripFinalNewline: false, env: { LC_ALL: 'C' } });
      if (r.failed && r.exitCode === undefined) {
        const missing = (r as { code?: string }).code === 'ENOENT';
        return { exitCode: missing ? NOT_FOUND : -1, stdout: r.stdout, stderr: missing ? `${file}: command not found` : (r.stderr || r.shortMessage) ?? '' };
      }
      return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
  };
}

import type { RunResult, Runner } from '../../src/exec/runner.js';

export const ok = (stdout = ''): RunResult => ({ exitCode: 0, stdout, stderr: '' });

/** A runner that answers from canned outputs (by whole command line, then by command) and records every line it ran. */
export function scripted(answers: Record<string, RunResult>): Runner & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    run: async (cmd, args) => {
      const line = [cmd, ...args].join(' ');
      calls.push(line);
      return answers[line] ?? answers[cmd] ?? { exitCode: 127, stdout: '', stderr: `${cmd}: command not found` };
    },
  };
}

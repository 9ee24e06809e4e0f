import type { RunResult, Runner } from '../../src/exec/runner.js';

export const ok = (stdout = ''): RunResult => ({ exitCode: 0, stdout, stderr: '' });

/**
 * A runner that answers from canned outputs (by whole command line, then by command) and records every line it
 * ran, and what it was given on stdin (`inputs[i]` for `calls[i]`, undefined when nothing).
 */
export function scripted(answers: Record<string, RunResult>): Runner & { calls: string[]; inputs: (string | undefined)[] } {
  const calls: string[] = [];
  const inputs: (string | undefined)[] = [];
  return {
    calls,
    inputs,
    run: async (cmd, args, opts) => {
      const line = [cmd, ...args].join(' ');
      calls.push(line);
      inputs.push(opts?.input);
      return answers[line] ?? answers[cmd] ?? { exitCode: 127, stdout: '', stderr: `${cmd}: command not found` };
    },
  };
}

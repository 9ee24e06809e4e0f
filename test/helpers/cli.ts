import type { Host, InterfaceAddress } from '../../src/config/host.js';
import { runMeshcap } from '../../src/cli/run.js';
import type { Runner } from '../../src/exec/runner.js';

export interface FakeHostOptions {
  files?: Record<string, string>;
  addresses?: InterfaceAddress[];
}

/** A host with only the files and addresses a test gives it. */
export function fakeHost(opts: FakeHostOptions = {}): Host {
  return {
    readText: (path) => opts.files?.[path],
    interfaceAddresses: () => opts.addresses ?? [],
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Commands the run tried to start (it gets a runner that refuses them all). */
  commands: string[];
}

/**
 * Runs the meshcap command in-process with captured output. It never reaches the machine: its runner
 * records each command and fails it, so an in-process test cannot touch the host's namespace.
 */
export async function runCli(argv: string[], env: Record<string, string> = {}, host: Host = fakeHost(), runner?: Runner): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const commands: string[] = [];
  const refusing: Runner = {
    run: async (cmd, args) => {
      commands.push([cmd, ...args].join(' '));
      return { exitCode: 1, stdout: '', stderr: 'unit tests run no commands' };
    },
  };
  const code = await runMeshcap(argv, {
    env,
    host,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    makeRunner: () => runner ?? refusing,
  });
  return { code, stdout, stderr, commands };
}

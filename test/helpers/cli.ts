import type { Host, InterfaceAddress } from '../../src/config/host.js';
import { runMeshcap } from '../../src/cli/run.js';

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
}

/** Runs the meshcap command in-process with captured output. */
export async function runCli(argv: string[], env: Record<string, string> = {}, host: Host = fakeHost()): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runMeshcap(argv, {
    env,
    host,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  });
  return { code, stdout, stderr };
}

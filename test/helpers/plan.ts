import { buildProgram, isModeCommand } from '../../src/cli/program.js';
import { loadCommand } from '../../src/commands/load.js';
import type { SidecarConfig } from '../../src/config/schema.js';
import type { Plan } from '../../src/model/plan.js';
import { fakeHost } from './cli.js';

function load(argv: readonly string[], env: Record<string, string>) {
  const parsed = buildProgram({ out: () => undefined, err: () => undefined }).parse(argv);
  if (!isModeCommand(parsed)) throw new Error('no rule-installing command parsed');
  return loadCommand(parsed.command, parsed.flags, env, fakeHost());
}

/** The validated sidecar config for a meshcap command line, as the CLI would build it. */
export function configFor(argv: readonly string[], env: Record<string, string> = {}): SidecarConfig {
  const { sidecar } = load(argv, env);
  if (sidecar === undefined) throw new Error('not a sidecar command line');
  return sidecar;
}

/** The plan for any meshcap command line (sidecar, `ambient …`, `ambient-host …`). */
export function planFor(argv: readonly string[], env: Record<string, string> = {}): Plan {
  return load(argv, env).plan;
}

/** istio-init's flags as the injection template passes them. */
export const ISTIO_INIT_ARGS = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020'] as const;

import { buildProgram } from '../../src/cli/program.js';
import { loadSidecarConfig } from '../../src/config/sidecar.js';
import type { SidecarConfig } from '../../src/config/schema.js';
import { buildSidecarPlan } from '../../src/model/sidecar/build.js';
import type { Plan } from '../../src/model/plan.js';
import { fakeHost } from './cli.js';

/** The validated config for a meshcap command line, as the CLI would build it. */
export function configFor(argv: readonly string[], env: Record<string, string> = {}): SidecarConfig {
  const { program, readFlags } = buildProgram({ out: () => undefined, err: () => undefined });
  program.parse([...argv], { from: 'user' });
  return loadSidecarConfig(readFlags(), env, fakeHost());
}

export function planFor(argv: readonly string[], env: Record<string, string> = {}): Plan {
  return buildSidecarPlan(configFor(argv, env));
}

/** istio-init's flags as the injection template passes them. */
export const ISTIO_INIT_ARGS = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020'] as const;

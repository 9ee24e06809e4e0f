import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Istio's goldens, kept in the repo with their provenance (test/conformance/istio/PROVENANCE.md). */
export const CONFORMANCE_DIR = resolve(REPO_ROOT, 'test', 'conformance', 'istio');

/**
 * Which build the process-level suites run: `node` (default: `node dist/*.cjs`) or `bin` (the self-contained
 * executables in dist/bin, `MESHCAP_IMPL=bin`), so a runtime difference cannot hide.
 */
export const IMPL = process.env['MESHCAP_IMPL'] === 'bin' ? 'bin' : 'node';
export const MESHCAP_BIN = resolve(REPO_ROOT, 'dist', 'meshcap.cjs');

/** The command line that runs `meshcap` or `meshcap-cni` in the build under test. */
export function entryCommand(name: 'meshcap' | 'meshcap-cni' = 'meshcap'): { file: string; args: string[] } {
  return IMPL === 'bin' ? { file: resolve(REPO_ROOT, 'dist', 'bin', name), args: [] } : { file: process.execPath, args: [resolve(REPO_ROOT, 'dist', `${name}.cjs`)] };
}

import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Istio's goldens live beside the project, never copied into it. */
export const CONFORMANCE_DIR = resolve(REPO_ROOT, '..', 'shared', 'conformance');
export const MESHCAP_BIN = resolve(REPO_ROOT, 'dist', 'meshcap.mjs');

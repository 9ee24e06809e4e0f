import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, copyFileSync, chmodSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Atomic file replacement in the CNI dirs: a temp file in the same directory whose name ends in no CNI
 * extension (`.<name>.meshcap-tmp.<pid>`), written and fsynced with the mode wanted, then renamed over the
 * target — a runtime reading the dir sees the old file or the new one, never a partial or a stray config.
 */

const tempFor = (path: string) => join(dirname(path), `.${basename(path)}.meshcap-tmp.${process.pid}`);

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // a dir that cannot be opened for fsync (some overlay mounts): the rename is still atomic
  }
}

export function modeOf(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o7777;
  } catch {
    return undefined;
  }
}

/**
 * Puts a file in place the crash-safe way: `fill` writes a temp file in the same directory (no CNI extension,
 * so a runtime never loads it half-written), which gets `mode`, is fsynced and renamed over `path`; then the
 * directory is fsynced so the rename itself survives a crash. The temp file never outlives a failure.
 */
function replaceAtomically(path: string, mode: number, fill: (tmp: string) => void): void {
  const tmp = tempFor(path);
  try {
    fill(tmp);
    chmodSync(tmp, mode);
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  syncDir(dirname(path));
}

export function writeAtomic(path: string, text: string, mode: number): void {
  replaceAtomically(path, mode, (tmp) => writeFileSync(tmp, text, { mode }));
}

function sameContent(a: string, b: string): boolean {
  try {
    const sa = statSync(a);
    const sb = statSync(b);
    if (sa.size !== sb.size || (sb.mode & 0o777) !== 0o755) return false;
    return readFileSync(a).equals(readFileSync(b));
  } catch {
    return false;
  }
}

/** Copies an executable into place (temp + rename, mode 0755); nothing when the target is already identical. */
export function installBinary(source: string, target: string): boolean {
  if (sameContent(source, target)) return false;
  replaceAtomically(target, 0o755, (tmp) => copyFileSync(source, tmp));
  return true;
}

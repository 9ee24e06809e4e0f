import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvironmentError, LockBusyError } from '../errors.js';

const LOCK_DIRS = ['/run/meshcap', join(tmpdir(), 'meshcap-locks')];
const POLL_MS = 15;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The lock file of one network namespace, named by the namespace's identity (device and inode). */
function lockPaths(netns: string | undefined): string[] {
  const st = statSync(netns ?? '/proc/self/ns/net');
  return LOCK_DIRS.flatMap((dir) => {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      return [join(dir, `netns-${st.dev}-${st.ino}.lock`)];
    } catch {
      return [];
    }
  });
}

/** Tries to create the lock file: taken, already there (held by someone), or a read-only place. */
function tryCreate(path: string): 'taken' | 'exists' | 'unwritable' {
  try {
    const fd = openSync(path, 'wx', 0o600);
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return 'taken';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return 'exists';
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'ENOENT') return 'unwritable';
    throw new EnvironmentError(`cannot create the namespace lock ${path}: ${(err as Error).message}`);
  }
}

/**
 * Runs `fn` holding meshcap's lock for one network namespace, so concurrent runs against the same namespace
 * (a kubelet retry racing a CNI ADD, ten CLIs at once) read the state and change it one after another. The
 * lock is an exclusively created file holding the owner's PID; a lock whose owner is gone is taken over.
 */
export async function withNamespaceLock<T>(netns: string | undefined, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const candidates = lockPaths(netns);
  const deadline = Date.now() + timeoutMs;
  let path: string | undefined;
  for (;;) {
    let held = false;
    for (const p of path === undefined ? candidates : [path]) {
      const r = tryCreate(p);
      if (r === 'unwritable') continue;
      path = p;
      held = r === 'taken';
      break;
    }
    // A read-only root file system (an init container with readOnlyRootFilesystem) has nowhere to lock,
    // and nothing to race with either: run unlocked.
    if (path === undefined) return fn();
    if (held) break;
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(path, 'utf8'));
    } catch {
      continue; // released meanwhile
    }
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) {
      try {
        unlinkSync(path);
      } catch {
        // someone else took it over first
      }
      continue;
    }
    if (Date.now() >= deadline) throw new LockBusyError(`another meshcap (pid ${owner}) holds the lock for this namespace (${path}); try again later`);
    await sleep(POLL_MS + Math.random() * POLL_MS);
  }
  try {
    return await fn();
  } finally {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
}

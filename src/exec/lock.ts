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
function lockPath(netns: string | undefined): string {
  const st = statSync(netns ?? '/proc/self/ns/net');
  for (const dir of LOCK_DIRS) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      return join(dir, `netns-${st.dev}-${st.ino}.lock`);
    } catch {
      // try the next place
    }
  }
  throw new EnvironmentError('no writable directory for meshcap\'s namespace lock');
}

/**
 * Runs `fn` holding meshcap's lock for one network namespace, so concurrent runs against the same namespace
 * (a kubelet retry racing a CNI ADD, ten CLIs at once) read the state and change it one after another. The
 * lock is an exclusively created file holding the owner's PID; a lock whose owner is gone is taken over.
 */
export async function withNamespaceLock<T>(netns: string | undefined, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const path = lockPath(netns);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new EnvironmentError(`cannot create the namespace lock ${path}: ${(err as Error).message}`);
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

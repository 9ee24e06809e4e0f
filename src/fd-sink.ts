import { fstatSync, readFileSync, writeSync } from 'node:fs';
import type { LogSink } from './log.js';

/**
 * Output straight to a file descriptor, synchronously. The entry points write their product and logs this
 * way instead of through process.stdout/stderr/stdin: building those stream objects was the largest part of
 * the executable's start-up (~12 ms a process, per-pod-cost.md §3), more than every module meshcap loads.
 * A reader that has gone away (`meshcap -n | head`, EPIPE) is not an error: the rest is dropped quietly, as
 * other Unix tools do. A descriptor in non-blocking mode (EAGAIN: a full pipe) is retried until it takes the
 * bytes, a millisecond apart, so a slow reader is waited for rather than spun on.
 */
export function fdSink(fd: number): LogSink {
  let closed = false;
  return {
    write(chunk: string) {
      if (closed) return true;
      let buf = Buffer.from(chunk, 'utf8');
      while (buf.length > 0) {
        try {
          buf = buf.subarray(writeSync(fd, buf));
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === 'EAGAIN') {
            pause(1);
            continue;
          }
          if (code === 'EPIPE') {
            closed = true;
            return true;
          }
          throw err;
        }
      }
      return true;
    },
  };
}

/** Blocks this thread for `ms` (the one synchronous sleep JavaScript has). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether stdin is a terminal (nothing was piped in), without building process.stdin. */
export function stdinIsTerminal(): boolean {
  try {
    return fstatSync(0).isCharacterDevice();
  } catch {
    return false;
  }
}

/** All of stdin as text ('' when it cannot be read), without building process.stdin. */
export function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

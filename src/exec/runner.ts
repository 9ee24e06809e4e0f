import type { NamespaceProbe } from './native.js';

/** The result of one external command. Non-zero exits are results, not exceptions. */
export interface RunResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Written to the command's stdin. */
  readonly input?: string;
  /**
   * Run in the user namespace that owns the target network namespace, where that is not meshcap's own (a pod
   * with `hostUsers: false`): every write (a restore, an `nft -f`, an `ip` change — the kernel refuses owner
   * matches written from elsewhere) and the reads that print UIDs as the pod sees them (socket owners).
   * Other reads stay in meshcap's user namespace: some of what they read is not readable from inside.
   */
  readonly ownerUserns?: boolean;
}

/** How the executor runs commands: node:child_process in production, a recording fake in unit tests. */
export interface Runner {
  run(cmd: string, args: readonly string[], opts?: RunOptions): Promise<RunResult>;
  /**
   * What the target namespace holds, read in-process (its nf_tables tables, its legacy table names), so a
   * fresh pod needs no `*-save` or `nft list` process; undefined (or absent) where that cannot be read — the
   * callers then read with processes, as before, and reach the same decision.
   */
  probe?(): Promise<NamespaceProbe | undefined>;
  /**
   * rtnetlink (NETLINK_ROUTE) requests made in-process in the target namespace (src/exec/native.ts's
   * exchangeRoute): each request's reply messages, in order, up to the first the kernel refuses. Undefined
   * (or absent) where that cannot be done — nothing was sent, and routing runs `ip -batch` as before.
   */
  rtnetlink?(requests: readonly Buffer[]): Promise<Buffer[][] | undefined>;
}

/** Exit code a runner reports when the command does not exist (as a shell would). */
export const NOT_FOUND = 127;

/** A one-line description of a command for logs and errors. */
export function describeCommand(cmd: string, args: readonly string[]): string {
  return [cmd, ...args].join(' ');
}

/** Wraps a runner and counts the processes it starts (the report's "processes per apply"). */
export function countingRunner(inner: Runner): Runner & { readonly count: () => number } {
  let n = 0;
  return {
    run(cmd, args, opts) {
      n++;
      return inner.run(cmd, args, opts);
    },
    ...(inner.probe === undefined ? {} : { probe: () => inner.probe?.() ?? Promise.resolve(undefined) }),
    // Not a process: in-process requests are not counted.
    ...(inner.rtnetlink === undefined ? {} : { rtnetlink: (requests: readonly Buffer[]) => inner.rtnetlink?.(requests) ?? Promise.resolve(undefined) }),
    count: () => n,
  };
}

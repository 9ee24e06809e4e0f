/** Exit codes of both entry points (see README "Exit codes"). */
export const ExitCode = {
  ok: 0,
  /** A bug: stderr says "internal error". */
  bug: 1,
  /**
   * A check command found something, as `diff` and `iptables -C` answer "found": `--verify` (the namespace
   * differs), precheck/lint (a finding at or above --fail-on). A bug also exits 1 but says "internal error".
   */
  findings: 1,
  config: 2,
  invariant: 3,
  command: 4,
  environment: 5,
  validation: 126,
} as const;

export type ErrorCode = 'config' | 'invariant' | 'command' | 'environment' | 'validation';

/** Base of every error meshcap reports on purpose; anything else is a bug (exit 1). */
export class MeshcapError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number = 1;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MeshcapError';
    this.code = code;
    this.exitCode = ExitCode[code];
  }
}

/** Bad input: names the flag, env var or field, and the offending value. Exit 2. */
export class ConfigError extends MeshcapError {
  readonly field: string;
  readonly value: string | undefined;
  constructor(field: string, value: string | undefined, reason: string) {
    const shown = value === undefined ? '' : `=${JSON.stringify(value)}`;
    super('config', `invalid ${field}${shown}: ${reason}`);
    this.name = 'ConfigError';
    this.field = field;
    this.value = value;
  }
}

/** A pod annotation the plugin refuses, its message naming the annotation and its value as the pod carries them. Exit 2 / CNI code 7. */
export class AnnotationError extends MeshcapError {
  constructor(message: string) {
    super('config', message);
    this.name = 'AnnotationError';
  }
}

/** The plan broke one of its own invariants. Exit 3. */
export class PlanError extends MeshcapError {
  constructor(message: string) {
    super('invariant', message);
    this.name = 'PlanError';
  }
}

/** A tool's banner with nothing after it: `iptables-nft-restore v1.8.9 (nf_tables): `. */
const BANNER = /^\S+ v\d[\w.]* \([^)]*\):\s*/;
/** Lines that only point at the failure: nft's carets under the echoed input, iptables' usage hint. */
const POINTER = /^[\s^~]+$|^Try `.*for more information\.?$/;

/**
 * What a failed command's stderr says about why, as one line: every line that gives a reason, banners and
 * pointers left out (iptables-nft-restore prints its banner on a line of its own and the reason on the next;
 * nft echoes the failing input under its `Error:` line).
 */
export function reasonOf(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.replace(BANNER, '').trim())
    .filter((l) => l !== '' && !POINTER.test(l));
  const errors = lines.filter((l) => /\bError:/.test(l));
  return (errors.length > 0 ? errors : lines).join('; ');
}

/** An external command failed. Exit 4. */
export class CommandError extends MeshcapError {
  readonly command: string;
  readonly commandExitCode: number | undefined;
  readonly stderr: string;
  readonly hint: string | undefined;
  constructor(opts: { command: string; exitCode: number | undefined; stderr: string; hint?: string | undefined }) {
    const hint = opts.hint ? ` (hint: ${opts.hint})` : '';
    super('command', `${opts.command} failed (exit ${opts.exitCode ?? 'signal'}): ${reasonOf(opts.stderr)}${hint}`);
    this.name = 'CommandError';
    this.command = opts.command;
    this.commandExitCode = opts.exitCode;
    this.stderr = opts.stderr;
    this.hint = opts.hint;
  }
}

/**
 * A netlink request the kernel refused — what meshcap sends in-process instead of running `ip` — named as the
 * operation it was, with the kernel's words: `rtnetlink RTM_NEWRULE fwmark 0x539 lookup 133 (ipv4) failed:
 * File exists`. A CommandError (exit 4, CNI's apply-failed), as the `ip` it replaces would have been.
 */
export class NetlinkError extends CommandError {
  readonly errno: number;
  constructor(opts: { operation: string; errno: number; reason: string; hint?: string | undefined }) {
    super({ command: opts.operation, exitCode: undefined, stderr: opts.reason, hint: opts.hint });
    this.message = `${opts.operation} failed: ${opts.reason}${opts.hint ? ` (hint: ${opts.hint})` : ''}`;
    this.name = 'NetlinkError';
    this.errno = opts.errno;
  }
}

/** The environment is not usable: missing netns, unreadable file, no permission. Exit 5. */
export class EnvironmentError extends MeshcapError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('environment', message, options);
    this.name = 'EnvironmentError';
  }
}

/** The --run-validation probe did not see its connection redirected. Exit 126, as Istio. */
export class ValidationProbeError extends MeshcapError {
  constructor(message: string) {
    super('validation', message);
    this.name = 'ValidationProbeError';
  }
}

/** The namespace holds a different set of our rules and --reconcile was not given. Exit 5. */
export class StateConflictError extends MeshcapError {
  readonly differences: readonly string[];
  constructor(differences: readonly string[]) {
    const shown = differences.slice(0, 3).join('; ');
    const more = differences.length > 3 ? ` (+${differences.length - 3} more)` : '';
    super('environment', `the namespace holds a different set of capture rules: ${shown}${more}; rerun with --reconcile to replace them`);
    this.name = 'StateConflictError';
    this.differences = differences;
  }
}

/** Another meshcap holds this namespace's lock past the wait. Exit 5; CNI "try again later" (11). */
export class LockBusyError extends MeshcapError {
  constructor(message: string) {
    super('environment', message);
    this.name = 'LockBusyError';
  }
}

/** SIGTERM/SIGINT arrived during an apply: what was changed has been put back. Exit 143, as a killed process. */
export class InterruptedError extends MeshcapError {
  override readonly exitCode = 143;
  constructor(signal: string) {
    super('environment', `interrupted by ${signal}: the namespace was put back to its state before this run`);
    this.name = 'InterruptedError';
  }
}

import { appendFileSync } from 'node:fs';
import { fdSink, readStdin, stdinIsTerminal } from '../src/fd-sink.js';
import { tryPassThrough } from './pass-through.js';
import { versionReply } from './spec.js';

/**
 * What the plugin answers before its handler's graph (zod's schemas, pino, the engine) is loaded: VERSION,
 * asked several times per pod, and an ADD that passes a pod through untouched under an already validated
 * entry (cni/pass-through.ts). Both plugin entries call this first — cni/main.ts (the Node build) and
 * src/bin.ts (the executable, whose dispatcher it is part of). Everything here is free of zod and pino.
 */
export type FrontAnswer = { readonly answered: true } | { readonly answered: false; readonly stdin: string };

/** Appends a log line to the config's log_file (the front's and the full path's); a file that cannot be written must never fail the pod. */
export function appendLog(path: string, line: string): void {
  try {
    appendFileSync(path, line);
  } catch {
    // ignored: the pod's set-up goes on
  }
}

export function answerFront(): FrontAnswer {
  if (process.env['CNI_COMMAND'] === 'VERSION') {
    fdSink(1).write(versionReply(stdinIsTerminal() ? '' : readStdin()));
    return { answered: true };
  }
  const stdin = readStdin();
  const fast = tryPassThrough(process.env, stdin);
  if (fast === undefined) return { answered: false, stdin };
  fdSink(2).write(fast.log);
  if (fast.logFile !== undefined && fast.log !== '') appendLog(fast.logFile, fast.log);
  fdSink(1).write(fast.stdout);
  return { answered: true };
}

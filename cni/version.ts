import { fdSink, readStdin, stdinIsTerminal } from '../src/fd-sink.js';
import { versionReply } from './spec.js';

/**
 * A runtime asks VERSION several times per pod: answered from the pure spec module, before anything else is
 * loaded. Both plugin entries call this first — cni/main.ts (the Node build) and src/bin.ts (the executable,
 * which loads the plugin's own code only for the other commands). True when it answered.
 */
export function answerVersion(): boolean {
  if (process.env['CNI_COMMAND'] !== 'VERSION') return false;
  fdSink(1).write(versionReply(stdinIsTerminal() ? '' : readStdin()));
  return true;
}

import type { Runner } from '../src/exec/runner.js';
import { fdSink } from '../src/fd-sink.js';
import { remember } from './config-memo.js';
import { appendLog } from './front.js';

/**
 * The plugin's full path: every call cni/front.ts did not answer. Loads the handler (cni/handler.ts) and
 * prints its answer; ends the process only by its exit code. Output goes straight to fds 1 and 2
 * (src/fd-sink.ts), never through the process's stream objects.
 */

/** The spawning runner is loaded on the first command run, so a pass-through ADD never loads it. */
const lazyRunner = (netns: string | undefined): Runner => {
  let inner: Promise<Runner> | undefined;
  const load = () => (inner ??= import('../src/exec/spawn-runner.js').then((m) => m.createSpawnRunner(netns)));
  return {
    async run(cmd, args, opts) {
      return (await load()).run(cmd, args, opts);
    },
    async probe() {
      return (await load()).probe?.();
    },
    async rtnetlink(requests) {
      return (await load()).rtnetlink?.(requests);
    },
  };
};

export function runPlugin(stdin: string): void {
  const stderr = fdSink(2);
  void Promise.all([import('./handler.js'), import('../src/config/host.js')])
    .then(([{ handlePlugin }, { nodeHost }]) => handlePlugin({ env: process.env, stdin, host: nodeHost, stderr, makeRunner: lazyRunner, appendLog, rememberConfig: (text, conf) => remember(process.env, text, conf) }))
    .then((out) => {
      fdSink(1).write(out.stdout);
      process.exitCode = out.exitCode;
    });
}

import { appendFileSync, readFileSync } from 'node:fs';
import type { Runner } from '../src/exec/runner.js';
import { fdSink, stdinIsTerminal } from '../src/fd-sink.js';
import { versionReply } from './spec.js';

/**
 * The `meshcap-cni` executable: a chained CNI plugin. The only place that ends the process (no top-level
 * await: bytecode builds are CJS). A runtime asks VERSION several times per pod: it is answered here, from
 * the pure spec module, before the handler's graph (zod, pino, the engine) is loaded at all. Output goes
 * straight to fds 1 and 2 (src/fd-sink.ts), never through the process's stream objects.
 */
function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

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

const stdout = fdSink(1);
const stderr = fdSink(2);

if (process.env['CNI_COMMAND'] === 'VERSION') {
  stdout.write(versionReply(stdinIsTerminal() ? '' : readStdin()));
} else {
  const stdin = readStdin();
  void Promise.all([import('./handler.js'), import('../src/config/host.js')])
    .then(([{ handlePlugin }, { nodeHost }]) =>
      handlePlugin({
        env: process.env,
        stdin,
        host: nodeHost,
        stderr,
        makeRunner: lazyRunner,
        appendLog: (path, line) => {
          try {
            appendFileSync(path, line);
          } catch {
            // A log file that cannot be written must never fail the pod.
          }
        },
      }),
    )
    .then((out) => {
      stdout.write(out.stdout);
      process.exitCode = out.exitCode;
    });
}

import { appendFileSync, readFileSync } from 'node:fs';
import { nodeHost } from '../src/config/host.js';
import type { Runner } from '../src/exec/runner.js';
import { handlePlugin } from './handler.js';

/** The `meshcap-cni` executable: a chained CNI plugin. The only place that ends the process (no top-level await: bytecode builds are CJS). */
function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

/** execa is loaded on the first command run, so VERSION (asked several times per pod) never parses it. */
const lazyRunner = (netns: string | undefined): Runner => {
  let inner: Promise<Runner> | undefined;
  return {
    async run(cmd, args, opts) {
      inner ??= import('../src/exec/spawn-runner.js').then((m) => m.createSpawnRunner(netns));
      return (await inner).run(cmd, args, opts);
    },
  };
};

void handlePlugin({
  env: process.env,
  stdin: process.env['CNI_COMMAND'] === 'VERSION' && process.stdin.isTTY ? '' : readStdin(),
  host: nodeHost,
  stderr: process.stderr,
  makeRunner: lazyRunner,
  appendLog: (path, line) => {
    try {
      appendFileSync(path, line);
    } catch {
      // A log file that cannot be written must never fail the pod.
    }
  },
}).then((out) => {
  process.stdout.write(out.stdout);
  process.exitCode = out.exitCode;
});

import { nodeHost } from '../config/host.js';
import { fdSink } from '../fd-sink.js';
import { runMeshcap } from './run.js';

/**
 * The `meshcap` executable. The only place that ends the process. (No top-level await: bytecode builds are
 * CJS.) Output goes straight to fds 1 and 2 (src/fd-sink.ts): no stream objects on the pod start path, and a
 * reader that goes away (`meshcap -n | head`) ends the output quietly with the exit code kept.
 */
void runMeshcap(process.argv.slice(2), {
  env: process.env,
  host: nodeHost,
  stdout: fdSink(1),
  stderr: fdSink(2),
}).then((code) => {
  process.exitCode = code;
});

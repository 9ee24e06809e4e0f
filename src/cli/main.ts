import { nodeHost } from '../config/host.js';
import { runMeshcap } from './run.js';

/**
 * A reader that goes away (`meshcap -n | head`) is not an error: stop writing and keep the exit code, as
 * other Unix tools do, instead of an unhandled EPIPE stack trace.
 */
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
});

/** The `meshcap` executable. The only place that ends the process. (No top-level await: bytecode builds are CJS.) */
void runMeshcap(process.argv.slice(2), {
  env: process.env,
  host: nodeHost,
  stdout: process.stdout,
  stderr: process.stderr,
}).then((code) => {
  process.exitCode = code;
});

import { nodeHost } from '../config/host.js';
import { runMeshcap } from './run.js';

/** The `meshcap` executable. The only place that ends the process. (No top-level await: bytecode builds are CJS.) */
void runMeshcap(process.argv.slice(2), {
  env: process.env,
  host: nodeHost,
  stdout: process.stdout,
  stderr: process.stderr,
}).then((code) => {
  process.exitCode = code;
});

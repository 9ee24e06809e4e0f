import { nodeHost } from '../config/host.js';
import { runMeshcap } from './run.js';

/** The `meshcap` executable. The only place that ends the process. */
const code = await runMeshcap(process.argv.slice(2), {
  env: process.env,
  host: nodeHost,
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exitCode = code;

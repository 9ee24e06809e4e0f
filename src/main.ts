import { nodeHost } from './config/host.js';
import { runMeshcap } from './cli/run.js';

/**
 * A reader that goes away (`meshcap -n | head`) is not an error: stop writing and keep the exit code, as
 * other Unix tools do, instead of an unhandled EPIPE stack trace.
 */
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
});

/**
 * The `meshcap` executable: chooses the door by the first argument — the node agent (`node-agent`,
 * `node-status`, loaded only then) or the command line (everything else). The only place that ends the
 * process. (No top-level await: bytecode builds are CJS.)
 */
const argv = process.argv.slice(2);
const deps = { env: process.env, host: nodeHost, stdout: process.stdout, stderr: process.stderr };
// A require, not an import(): the Node build keeps the agent in a bundle of its own (scripts/build.mjs).
const loadAgent = () => require('./agent/run.js') as typeof import('./agent/run.js');
const run = argv[0] === 'node-agent' || argv[0] === 'node-status' ? Promise.resolve().then(() => loadAgent().runAgentCommand(argv, deps)) : runMeshcap(argv, deps);
void run.then((code) => {
  process.exitCode = code;
});

import { nodeHost } from './config/host.js';
import { fdSink } from './fd-sink.js';
import { runMeshcap } from './cli/run.js';

/**
 * The `meshcap` executable: chooses the door by the first argument — the node agent (`node-agent`,
 * `node-status`, loaded only then) or the command line (everything else). The only place that ends the
 * process. (No top-level await: bytecode builds are CJS.) Output goes straight to fds 1 and 2
 * (src/fd-sink.ts): no stream objects on the pod start path, and a reader that goes away (`meshcap -n | head`)
 * ends the output quietly with the exit code kept.
 */
const argv = process.argv.slice(2);
const deps = { env: process.env, host: nodeHost, stdout: fdSink(1), stderr: fdSink(2) };
// A require, not an import(): the Node build keeps the agent in a bundle of its own (scripts/build.mjs).
const loadAgent = () => require('./agent/run.js') as typeof import('./agent/run.js');
const run = argv[0] === 'node-agent' || argv[0] === 'node-status' ? Promise.resolve().then(() => loadAgent().runAgentCommand(argv, deps)) : runMeshcap(argv, deps);
void run.then((code) => {
  process.exitCode = code;
});

// Builds the Node entry points so start-up stays close to bare `node`: each bin is a tiny CommonJS loader that
// runs one CommonJS bundle through V8's code cache (made here by one representative run); dependency code
// meshcap never calls at run time is replaced by stubs (scripts/stubs.mjs).
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { build } from 'esbuild';
import { stubPlugin } from './stubs.mjs';

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));

const entries = [
  { in: 'src/main.ts', out: 'meshcap', warm: { args: ['-n', '-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020', '--ipv6', 'off'], env: {} } },
  { in: 'cni/main.ts', out: 'meshcap-cni', warm: { args: [], env: { CNI_COMMAND: 'VERSION' } } },
];

/**
 * The node agent (`meshcap node-agent`, `node-status`: gRPC, protobuf, Prometheus) is a bundle of its own,
 * required by the meshcap bundle only when one of its commands runs: its ~500 KB would otherwise be read and
 * checked on every istio-init start (+10 ms measured).
 */
const agentSplit = {
  name: 'meshcap-agent-split',
  setup(b) {
    b.onResolve({ filter: /^\.\/agent\/run\.js$/ }, (args) => (args.importer.endsWith('src/main.ts') ? { path: './meshcap-agent.cjs', external: true } : undefined));
  },
};

/**
 * Graphviz for `--format svg` (@viz-js/viz, 1.2 MB with its wasm inlined) stays out of the bundle: the bundle
 * requires it from dist/lib/viz.cjs, a copy of the package's own CommonJS build, so istio-init's start path
 * never reads it.
 */
const outsideBundle = {
  name: 'meshcap-outside-bundle',
  setup(b) {
    b.onResolve({ filter: /^@viz-js\/viz$/ }, () => ({ path: './viz.cjs', external: true }));
  },
};

mkdirSync('dist/lib', { recursive: true });
copyFileSync(createRequire(import.meta.url).resolve('@viz-js/viz'), 'dist/lib/viz.cjs');
await build({
  entryPoints: [...entries.map((e) => ({ in: e.in, out: e.out })), { in: 'src/agent/run.ts', out: 'meshcap-agent' }],
  outdir: 'dist/lib',
  entryNames: '[name]',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  plugins: [agentSplit, stubPlugin, outsideBundle],
  // Native calls (src/exec/native.ts): koffi is loaded from node_modules at run time (its .node binary cannot
  // be bundled); bun:ffi exists only in the executable.
  external: ['koffi', 'bun:ffi'],
  define: { __MESHCAP_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
});

const loader = readFileSync('scripts/loader.cjs', 'utf8');
for (const e of entries) {
  const bin = `dist/${e.out}.cjs`;
  writeFileSync(bin, loader.replace('__NAME__', e.out));
  chmodSync(bin, 0o755);
  // One representative run (a dry-run; VERSION for the plugin) leaves the code cache next to the bundle.
  execFileSync(process.execPath, [bin, ...e.warm.args], { env: { ...process.env, ...e.warm.env, MESHCAP_CODE_CACHE: 'write' }, stdio: ['ignore', 'ignore', 'ignore'] });
}

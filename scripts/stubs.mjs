import { readFileSync } from 'node:fs';

// Stubs for modules that dependencies load at import time but meshcap never calls: each costs start-up on
// every pod (measured in Bun, where Node's built-in modules are JavaScript loaded on first require: pino's
// worker_threads ~1.1 ms, sonic-boom with util and assert ~1.8 ms, os ~0.6 ms). Shared by the Node bundles
// (esbuild, scripts/build.mjs) and the executable (Bun.build, scripts/build-bin.mjs): both take the plugin.
const PINO = /node_modules[\\/]pino[\\/]/;

export const STUBS = [
  // Transports run pino in worker threads; meshcap logs synchronously to its own sink.
  { importer: PINO, path: /^\.\/(lib\/)?transport(\.js)?$/, contents: 'module.exports = () => { throw new Error("pino transports are not bundled in meshcap"); };' },
  // Finds the caller's file for transport targets (a stack trace on every pino() call).
  { importer: PINO, path: /^\.\/(lib\/)?caller(\.js)?$/, contents: 'module.exports = () => [];' },
  // pino.destination()'s writer: meshcap always hands pino its own sink (src/log.ts), never a destination.
  { importer: PINO, path: /^sonic-boom$/, contents: 'function SonicBoom() { throw new Error("pino.destination is not bundled in meshcap"); } module.exports = SonicBoom;' },
  // commander's executable subcommands (meshcap has none).
  { importer: /node_modules[\\/]commander[\\/]/, path: /^node:child_process$/, contents: 'module.exports = {};' },
];

/**
 * Node built-ins a dependency requires but meshcap never needs: replaced in the dependency's source text (Bun
 * resolves built-ins before any plugin sees them, so a stub cannot stand in for them). Each text must occur
 * exactly once, or the build fails: an upgrade that moves it is noticed, never silently kept.
 */
export const REWRITES = [
  // Only transports (stubbed above) ask whether this is the main thread.
  { file: /node_modules[\\/]pino[\\/]lib[\\/]tools\.js$/, from: "require('worker_threads')", to: '({ isMainThread: true })' },
  // Read once at load for pino's default `base` (pid, hostname), which meshcap replaces with null.
  { file: /node_modules[\\/]pino[\\/]pino\.js$/, from: "require('node:os')", to: '({ hostname: () => "" })' },
];

/** The stubs and rewrites as a bundler plugin (esbuild's and Bun's plugin APIs agree on onResolve/onLoad). */
export const stubPlugin = {
  name: 'meshcap-stubs',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      const stub = STUBS.findIndex((s) => s.path.test(args.path) && s.importer.test(args.importer ?? ''));
      return stub < 0 ? undefined : { path: `stub-${stub}`, namespace: 'meshcap-stub' };
    });
    b.onLoad({ filter: /.*/, namespace: 'meshcap-stub' }, (args) => ({ contents: STUBS[Number(args.path.slice(5))].contents, loader: 'js' }));
    for (const r of REWRITES) {
      b.onLoad({ filter: r.file }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (text.split(r.from).length !== 2) throw new Error(`${args.path}: expected ${r.from} exactly once`);
        return { contents: text.replace(r.from, r.to), loader: 'js' };
      });
    }
  },
};

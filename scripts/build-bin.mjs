// Self-contained executables for linux-x64 (no Node needed on the host): Bun's compiler with bytecode,
// chosen by measurement (docs/performance.md). Runs under Bun (`npm run build:bin`), for Bun.build's
// plugins: the same stubs as the Node bundles (scripts/stubs.mjs).
//
// One binary serves both programs (dist/bin/meshcap-cni is a hard link; src/bin.ts dispatches on the name).
// Each program is an entry of its own inside it — src/bin.ts (the dispatcher, with the plugin's front,
// cni/front.ts), cni/plugin.ts and src/main.ts — because Bun's start-up grows with the size of the entry
// it runs: VERSION and a pass-through run only the dispatcher, and a plugin call never loads the CLI's.
import { linkSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { stubPlugin } from './stubs.mjs';

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));

mkdirSync('dist/bin', { recursive: true });
const result = await Bun.build({
  entrypoints: ['src/bin.ts', 'cni/plugin.ts', 'src/main.ts'],
  compile: { target: 'bun-linux-x64', outfile: 'dist/bin/meshcap' },
  bytecode: true,
  minify: true,
  format: 'cjs',
  // Native calls (src/exec/native.ts) use Bun's own bun:ffi here; koffi is for the Node build only.
  external: ['koffi'],
  define: { __MESHCAP_VERSION__: JSON.stringify(version) },
  plugins: [stubPlugin],
  throw: false,
});
if (!result.success) {
  for (const log of result.logs) console.error(String(log));
  process.exit(1);
}
rmSync('dist/bin/meshcap-cni', { force: true });
linkSync('dist/bin/meshcap', 'dist/bin/meshcap-cni');

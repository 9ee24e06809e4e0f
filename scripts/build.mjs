// Bundles each entry point into one ESM file so start-up stays close to bare `node`.
import { chmodSync } from 'node:fs';
import { build } from 'esbuild';

const entries = [
  { in: 'src/cli/main.ts', out: 'meshcap' },
  { in: 'cni/main.ts', out: 'meshcap-cni' },
];

await build({
  entryPoints: entries,
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  banner: {
    // Bundled CommonJS dependencies (pino) call require(); give the ESM bundle one.
    js: "#!/usr/bin/env node\nimport { createRequire as __mcCreateRequire } from 'node:module'; const require = __mcCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// Runnable as `dist/meshcap.mjs` too (the shebang finds node), e.g. from a CNI bin dir.
for (const e of entries) chmodSync(`dist/${e.out}.mjs`, 0o755);

// Self-contained executables for linux-x64 (no Node needed on the host): `bun build --compile` with
// bytecode, chosen by measurement (README "Self-contained executables").
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

const bun = 'node_modules/.bin/bun';
mkdirSync('dist/bin', { recursive: true });
for (const [entry, out] of [
  ['src/cli/main.ts', 'meshcap'],
  ['cni/main.ts', 'meshcap-cni'],
]) {
  execFileSync(bun, ['build', '--compile', '--bytecode', '--minify', '--target=bun-linux-x64', entry, '--outfile', `dist/bin/${out}`], { stdio: ['ignore', 'ignore', 'inherit'] });
}

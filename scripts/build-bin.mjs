// Self-contained executables for linux-x64 (no Node needed on the host): `bun build --compile` with
// bytecode, chosen by measurement (README "Self-contained executables"). One binary serves both programs;
// dist/bin/meshcap-cni is a hard link to it (it dispatches on the name it is started under).
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));

mkdirSync('dist/bin', { recursive: true });
execFileSync('node_modules/.bin/bun', ['build', '--compile', '--bytecode', '--minify', '--target=bun-linux-x64', '--external=koffi', `--define=__MESHCAP_VERSION__=${JSON.stringify(version)}`, 'src/bin.ts', '--outfile', 'dist/bin/meshcap'], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
rmSync('dist/bin/meshcap-cni', { force: true });
linkSync('dist/bin/meshcap', 'dist/bin/meshcap-cni');

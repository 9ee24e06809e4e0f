#!/usr/bin/env node
// `npm run bench:agent`: the node agent's sweep over 50 captured pods under a private containerd (root,
// containerd, runc, the CNI plugins). Writes its section of bench/results.md (before the nft section).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

execFileSync('npm', ['run', 'build:bin'], { stdio: 'ignore' });
const dir = mkdtempSync(join(tmpdir(), 'meshcap-bagent-'));
let r;
try {
  await build({ entryPoints: ['bench/agent-sweep.ts'], bundle: true, platform: 'node', format: 'esm', outfile: join(dir, 'agent.mjs'), logLevel: 'error', banner: { js: "import { createRequire as __c } from 'node:module'; const require = __c(import.meta.url);" } });
  r = JSON.parse(execFileSync(process.execPath, [join(dir, 'agent.mjs')], { encoding: 'utf8', maxBuffer: 1 << 24 }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const rows = [
  [`first sweep: ${r.pods} pods started before the agent, all repaired`, `${Math.round(r.first.ms)} ms, ${r.first.processes} processes (${r.first.repairs} repairs)`, `${(r.first.processes / r.pods).toFixed(0)} / pod`, 'within one sweep'],
  [`steady sweep over ${r.pods} captured pods (median of ${r.steadySweeps})`, `${Math.round(r.steadyMs)} ms, ${r.steadyProcesses} processes`, `${(r.steadyProcesses / r.pods).toFixed(0)} / pod`, 'reads only (no repair)'],
  [`\`meshcap node-status --json\` over the same node, whole process`, `${Math.round(r.nodeStatusMs)} ms (exit ${r.nodeStatusExit})`, '', 'reported'],
];
const header = `### Node agent (\`npm run bench:agent\`)\n\nMeasured ${new Date().toISOString().slice(0, 10)}, containerd 1.6 through its CRI, the self-contained executable, --sweep-interval 1.`;
const table = ['| benchmark | measured | per pod | target |', '| --- | --- | --- | --- |', ...rows.map((x) => `| ${x.join(' | ')} |`)].join('\n');
const section = `${header}\n\n${table}\n`;
const results = readFileSync('bench/results.md', 'utf8');
const [main, nft] = results.split('\n### Native nftables');
const kept = (main ?? '').split('\n### Node agent')[0]?.trimEnd() ?? '';
writeFileSync('bench/results.md', `${kept}\n\n${section}${nft === undefined ? '' : `\n### Native nftables${nft}`}`);
console.log(section);

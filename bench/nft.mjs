#!/usr/bin/env node
// `npm run bench:nft`: native nftables apply cost, each against a floor measured side by side in the same run
// (bench/measure.py alternates the commands). Needs root (namespaces), nft, iptables, python3. Appends its
// table to bench/results.md's nft section (replacing an older one).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const BIN = 'dist/bin/meshcap';
const NFT = (() => execFileSync('sh', ['-c', 'command -v nft'], { encoding: 'utf8' }).trim())();
const TPROXY = ['-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'TPROXY', '-b', '*', '-i', '*', '-d', '15090,15021,15020', '--ipv6', 'on'];
const REDIRECT = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020', '--ipv6', 'off'];
const ns = `mcbnft-${process.pid}`;
const nsPath = `/run/netns/${ns}`;
const addNs = ['sh', '-c', `ip netns add ${ns} && ip -n ${ns} link set lo up`];
const delNs = ['ip', 'netns', 'del', ns];
const fresh = { setup: addNs, teardown: delNs };

const measure = (commands, runs = RUNS) =>
  JSON.parse(execFileSync('python3', ['bench/measure.py'], { input: JSON.stringify({ runs, warmup: 3, commands }), maxBuffer: 1 << 26 }).toString());
const fmt = (x) => x.toFixed(2);
const ms = (x) => x.toFixed(1);

execFileSync('npm', ['run', 'build:bin'], { stdio: 'ignore' });
const dir = mkdtempSync(join(tmpdir(), 'meshcap-bnft-'));
let tproxyText = '';
let redirectText = '';
try {
  await build({ entryPoints: ['bench/nft-text.ts'], bundle: true, platform: 'node', format: 'esm', outfile: join(dir, 't.mjs'), logLevel: 'error', banner: { js: "import { createRequire as __c } from 'node:module'; const require = __c(import.meta.url);" } });
  const textOf = (args) => execFileSync(process.execPath, [join(dir, 't.mjs'), '--native-nftables', ...args], { encoding: 'utf8' });
  tproxyText = textOf(TPROXY);
  redirectText = textOf(REDIRECT);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const istioText = (args) => execFileSync(BIN, ['-n', '--native-nftables', ...args, '--dry-run-format', 'istio'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const rows = [];
const nsenter = (argv) => ['nsenter', `--net=${nsPath}`, '--', ...argv];

// First apply into a fresh namespace: meshcap (beyond its own dry-run) vs a bare `nft -f -` of the same text.
// REDIRECT IPv4 has no routing: the comparison is the nft transaction alone.
const plain = measure([
  { name: 'bare nft', argv: nsenter([NFT, '-f', '-']), stdin: redirectText, ...fresh },
  { name: 'bare nft, Istio text', argv: nsenter([NFT, '-f', '-']), stdin: istioText(REDIRECT), ...fresh },
  { name: 'dry-run', argv: [BIN, '-n', '--native-nftables', ...REDIRECT] },
  { name: 'nft apply', argv: [BIN, '--native-nftables', ...REDIRECT, '--netns', nsPath], ...fresh },
  { name: 'iptables apply', argv: [BIN, ...REDIRECT, '--netns', nsPath], ...fresh },
]);
const beyondPlain = plain['nft apply'].wall_ms - plain['dry-run'].wall_ms;
rows.push(['first apply, REDIRECT IPv4: `--native-nftables` beyond its dry-run vs bare `nft -f -` of the same text', `${ms(beyondPlain)} / ${ms(plain['bare nft'].wall_ms)} ms`, fmt(beyondPlain / plain['bare nft'].wall_ms), '≤ 1.1']);
rows.push(['first apply, REDIRECT IPv4: bare `nft -f -` of meshcap\'s transaction (fresh pod: deletes nothing, lists the chains) vs of Istio\'s text', `${ms(plain['bare nft'].wall_ms)} / ${ms(plain['bare nft, Istio text'].wall_ms)} ms`, fmt(plain['bare nft'].wall_ms / plain['bare nft, Istio text'].wall_ms), 'reported']);
rows.push(['first apply, REDIRECT IPv4: `--native-nftables` vs the iptables path, whole process', `${ms(plain['nft apply'].wall_ms)} / ${ms(plain['iptables apply'].wall_ms)} ms`, fmt(plain['nft apply'].wall_ms / plain['iptables apply'].wall_ms), 'reported']);
const first = measure([
  { name: 'bare nft', argv: nsenter([NFT, '-f', '-']), stdin: tproxyText, ...fresh },
  { name: 'dry-run', argv: [BIN, '-n', '--native-nftables', ...TPROXY] },
  { name: 'nft apply', argv: [BIN, '--native-nftables', ...TPROXY, '--netns', nsPath], ...fresh },
  { name: 'iptables apply', argv: [BIN, ...TPROXY, '--netns', nsPath], ...fresh },
]);
const beyond = first['nft apply'].wall_ms - first['dry-run'].wall_ms;
rows.push(['first apply, TPROXY v4+v6: `--native-nftables` beyond its dry-run vs bare `nft -f -` of the same text (+ routing)', `${ms(beyond)} / ${ms(first['bare nft'].wall_ms)} ms`, fmt(beyond / first['bare nft'].wall_ms), 'reported (≤ 1.1 for the nft part)']);
rows.push(['first apply, TPROXY v4+v6: `--native-nftables` vs the iptables path, whole process', `${ms(first['nft apply'].wall_ms)} / ${ms(first['iptables apply'].wall_ms)} ms`, fmt(first['nft apply'].wall_ms / first['iptables apply'].wall_ms), 'reported']);

// Re-apply in a namespace that already holds the rules.
execFileSync(addNs[0], addNs.slice(1));
let again;
try {
  execFileSync(BIN, ['--native-nftables', ...TPROXY, '--netns', nsPath], { stdio: 'ignore' });
  again = measure([
    { name: 'bare nft', argv: nsenter([NFT, '-f', '-']), stdin: tproxyText },
    { name: 'bare nft, Istio text', argv: nsenter([NFT, '-f', '-']), stdin: istioText(TPROXY) },
    { name: 'nft re-apply', argv: [BIN, '--native-nftables', ...TPROXY, '--netns', nsPath] },
  ]);
  execFileSync(BIN, ['--native-nftables', ...TPROXY, '--netns', nsPath, '--cleanup-only'], { stdio: 'ignore' });
  execFileSync(BIN, [...TPROXY, '--netns', nsPath], { stdio: 'ignore' });
  Object.assign(again, measure([{ name: 'iptables re-apply', argv: [BIN, ...TPROXY, '--netns', nsPath] }]));
} finally {
  execFileSync(delNs[0], delNs.slice(1));
}
const beyondAgain = again['nft re-apply'].wall_ms - first['dry-run'].wall_ms;
rows.push(['re-apply, TPROXY v4+v6: `--native-nftables` beyond its dry-run (one read, nothing written, routing look) vs bare `nft -f -` of the first apply\'s text', `${ms(beyondAgain)} / ${ms(again['bare nft'].wall_ms)} ms`, fmt(beyondAgain / again['bare nft'].wall_ms), 'reported']);
rows.push(['re-apply, TPROXY v4+v6: `--native-nftables` vs the iptables path (both read, find it unchanged, write nothing), whole process', `${ms(again['nft re-apply'].wall_ms)} / ${ms(again['iptables re-apply'].wall_ms)} ms`, fmt(again['nft re-apply'].wall_ms / again['iptables re-apply'].wall_ms), 'reported']);

// Processes per apply, from the apply's own report.
const processes = (args) => {
  execFileSync(addNs[0], addNs.slice(1));
  try {
    const out = execFileSync('sh', ['-c', `${BIN} ${args.map((a) => `'${a}'`).join(' ')} --netns ${nsPath} 2>&1 >/dev/null`], { encoding: 'utf8' });
    const line = out.split('\n').find((l) => l.includes('"msg":"applied"'));
    return line ? JSON.parse(line).processes : 'n/a';
  } finally {
    execFileSync(delNs[0], delNs.slice(1));
  }
};
rows.push(['processes per apply, REDIRECT IPv4: `--native-nftables` / iptables path', `${processes(['--native-nftables', ...REDIRECT])} / ${processes(REDIRECT)}`, '', '1 nft']);
rows.push(['processes per apply, TPROXY v4+v6: `--native-nftables` / iptables path', `${processes(['--native-nftables', ...TPROXY])} / ${processes(TPROXY)}`, '', '1 nft (routing by rtnetlink) / 2 restores']);

const nftVersion = execFileSync(NFT, ['--version'], { encoding: 'utf8' }).trim();
const header = `### Native nftables (\`npm run bench:nft\`)\n\nMeasured ${new Date().toISOString().slice(0, 10)}, ${nftVersion}, ${RUNS} alternating runs (medians), the self-contained executable.`;
const table = ['| benchmark | measured | ratio | target |', '| --- | --- | --- | --- |', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const results = readFileSync('bench/results.md', 'utf8');
const kept = results.split('\n### Native nftables')[0]?.trimEnd() ?? '';
writeFileSync('bench/results.md', `${kept}\n\n${header}\n\n${table}\n`);
console.log(`${header}\n\n${table}`);

#!/usr/bin/env node
// `npm run bench`: whole-process benchmarks, each against a floor measured side by side in the same run
// (bench/measure.py alternates the commands). Needs root (namespaces), iptables, python3; prints a table.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const ISTIO_INIT = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020', '--ipv6', 'off'];
const NODE = process.execPath;
const BIN = 'dist/bin/meshcap';
const CNI_BIN = 'dist/bin/meshcap-cni';
const ns = `mcbench-${process.pid}`;
const nsPath = `/run/netns/${ns}`;
const freshNs = { setup: ['sh', '-c', `ip netns add ${ns} && ip -n ${ns} link set lo up`], teardown: ['ip', 'netns', 'del', ns] };

function measure(commands, runs = RUNS) {
  const out = execFileSync('python3', ['bench/measure.py'], { input: JSON.stringify({ runs, warmup: 3, commands }), maxBuffer: 1 << 26 });
  return JSON.parse(out.toString());
}

const prevResult = { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: nsPath }], ips: [{ address: '198.51.100.7/24', interface: 0 }] };
const cniEnv = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'bench', CNI_NETNS: nsPath, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni', CNI_ARGS: 'IgnoreUnknown=1' }; // not a Kubernetes pod: the network opts it in (a K8S pod needs annotations)
const cniConf = (extra) => JSON.stringify({ cniVersion: '1.0.0', name: 'bench', type: 'meshcap-cni', prevResult, ipv6: 'off', force_iptables_binary: 'nft', ...extra });

execFileSync('npm', ['run', 'build'], { stdio: 'ignore' });
execFileSync('npm', ['run', 'build:bin'], { stdio: 'ignore' });
const restoreText = execFileSync(BIN, ['-n', ...ISTIO_INIT, '--dry-run-format', 'istio'], { encoding: 'utf8' })
  .split('\n')
  .filter((l) => l && !l.endsWith('tables-save'))
  .join('\n')
  .concat('\n');

const rows = [];
const ratio = (a, b) => a / b;
const fmt = (x) => x.toFixed(2);

// (a) + (b)
const startup = measure([
  { name: 'node -e 0', argv: [NODE, '-e', '0'] },
  { name: 'node dist/meshcap.cjs -n', argv: [NODE, 'dist/meshcap.cjs', '-n', ...ISTIO_INIT] },
  { name: 'dist/bin/meshcap -n', argv: [BIN, '-n', ...ISTIO_INIT] },
]);
const floor = startup['node -e 0'];
const nodePath = startup['node dist/meshcap.cjs -n'];
const exe = startup['dist/bin/meshcap -n'];
rows.push(['(a) `node dist/meshcap.cjs -n` vs `node -e 0`, wall', `${nodePath.wall_ms.toFixed(1)} / ${floor.wall_ms.toFixed(1)} ms`, fmt(ratio(nodePath.wall_ms, floor.wall_ms)), '≤ 1.15']);
rows.push(['(a) same, peak RSS', `${(nodePath.rss_kib / 1024).toFixed(1)} / ${(floor.rss_kib / 1024).toFixed(1)} MiB`, fmt(ratio(nodePath.rss_kib, floor.rss_kib)), '≤ 1.3']);
rows.push(['(b) `dist/bin/meshcap -n` vs `node -e 0`, wall', `${exe.wall_ms.toFixed(1)} / ${floor.wall_ms.toFixed(1)} ms`, fmt(ratio(exe.wall_ms, floor.wall_ms)), '≤ 0.8']);
rows.push(['(b) same, peak RSS', `${(exe.rss_kib / 1024).toFixed(1)} / ${(floor.rss_kib / 1024).toFixed(1)} MiB`, fmt(ratio(exe.rss_kib, floor.rss_kib)), 'reported']);

// Bun's own floor: a compiled hello world that reads stdin and writes a line to fd 1, built as the
// executable is (bytecode).
const hwDir = mkdtempSync(join(tmpdir(), 'mcbench-hw-'));
writeFileSync(join(hwDir, 'hello.js'), 'const fs = require("node:fs"); fs.readFileSync(0); fs.writeSync(1, "{}\\n");\n');
execFileSync('node_modules/.bin/bun', ['build', '--compile', '--bytecode', '--minify', '--target=bun-linux-x64', join(hwDir, 'hello.js'), '--outfile', join(hwDir, 'hello')], { stdio: 'ignore' });
// The plugin's memo (cni/config-memo.ts) of the bench's entry lives here; the warm-up runs leave it.
const memoDir = join(hwDir, 'memo');

execFileSync('sh', ['-c', `ip netns add ${ns} && ip -n ${ns} link set lo up`]);
let go;
try {
  go = measure([
    { name: 'bun hello world', argv: [join(hwDir, 'hello')], env: { CNI_COMMAND: 'VERSION' }, stdin: '{"cniVersion":"1.0.0"}' },
    { name: 'meshcap-cni pass-through ADD, first on the node', argv: [CNI_BIN], env: { ...cniEnv, CNI_ARGS: 'K8S_POD_NAMESPACE=kube-system;K8S_POD_NAME=bench', MESHCAP_CNI_MEMO_DIR: 'off' }, stdin: cniConf({}) },
    { name: 'portmap ADD', argv: ['/usr/lib/cni/portmap'], env: cniEnv, stdin: JSON.stringify({ cniVersion: '1.0.0', name: 'bench', type: 'portmap', capabilities: { portMappings: true }, prevResult }) },
    { name: 'dist/bin/meshcap -n', argv: [BIN, '-n', ...ISTIO_INIT] },
    { name: 'meshcap-cni pass-through ADD', argv: [CNI_BIN], env: { ...cniEnv, CNI_ARGS: 'K8S_POD_NAMESPACE=kube-system;K8S_POD_NAME=bench', MESHCAP_CNI_MEMO_DIR: memoDir }, stdin: cniConf({}) },
    { name: 'portmap VERSION', argv: ['/usr/lib/cni/portmap'], env: { CNI_COMMAND: 'VERSION' }, stdin: '{"cniVersion":"1.0.0"}' },
    { name: 'meshcap-cni VERSION', argv: [CNI_BIN], env: { CNI_COMMAND: 'VERSION' }, stdin: '{"cniVersion":"1.0.0"}' },
  ]);
} finally {
  execFileSync('ip', ['netns', 'del', ns]);
  rmSync(hwDir, { recursive: true, force: true });
}
const pm = go['portmap ADD'];
rows.push(['(b) `dist/bin/meshcap -n` vs Go `portmap` pass-through ADD, wall', `${go['dist/bin/meshcap -n'].wall_ms.toFixed(1)} / ${pm.wall_ms.toFixed(1)} ms`, fmt(ratio(go['dist/bin/meshcap -n'].wall_ms, pm.wall_ms)), 'reported (gap to Go)']);
rows.push(['(b) `meshcap-cni` VERSION vs `portmap` VERSION, wall', `${go['meshcap-cni VERSION'].wall_ms.toFixed(1)} / ${go['portmap VERSION'].wall_ms.toFixed(1)} ms`, fmt(ratio(go['meshcap-cni VERSION'].wall_ms, go['portmap VERSION'].wall_ms)), '≤ 2.5']);
rows.push(['(b) Bun\'s floor: a compiled hello world vs `portmap` VERSION, wall', `${go['bun hello world'].wall_ms.toFixed(1)} / ${go['portmap VERSION'].wall_ms.toFixed(1)} ms`, fmt(ratio(go['bun hello world'].wall_ms, go['portmap VERSION'].wall_ms)), 'reported (the runtime\'s own start)']);
rows.push(['(b) `meshcap-cni` VERSION vs that hello world, wall', `${go['meshcap-cni VERSION'].wall_ms.toFixed(1)} / ${go['bun hello world'].wall_ms.toFixed(1)} ms`, fmt(ratio(go['meshcap-cni VERSION'].wall_ms, go['bun hello world'].wall_ms)), 'reported']);
rows.push(['(b) `meshcap-cni` pass-through ADD vs `portmap` pass-through ADD, wall', `${go['meshcap-cni pass-through ADD'].wall_ms.toFixed(1)} / ${pm.wall_ms.toFixed(1)} ms`, fmt(ratio(go['meshcap-cni pass-through ADD'].wall_ms, pm.wall_ms)), '≤ 3']);
rows.push(['(b) same, the first on the node (no memo yet: the full path) vs `portmap`\'s, wall', `${go['meshcap-cni pass-through ADD, first on the node'].wall_ms.toFixed(1)} / ${pm.wall_ms.toFixed(1)} ms`, fmt(ratio(go['meshcap-cni pass-through ADD, first on the node'].wall_ms, pm.wall_ms)), 'reported']);
rows.push(['(b) same, peak RSS', `${(go['meshcap-cni pass-through ADD'].rss_kib / 1024).toFixed(1)} / ${(pm.rss_kib / 1024).toFixed(1)} MiB`, fmt(ratio(go['meshcap-cni pass-through ADD'].rss_kib, pm.rss_kib)), 'reported']);

// (c) + (d): real applies into a fresh namespace each run.
const apply = measure([
  { name: 'restore', argv: ['nsenter', `--net=${nsPath}`, '--', 'iptables-nft-restore', '--noflush'], stdin: restoreText, ...freshNs },
  { name: 'dry-run', argv: [BIN, '-n', ...ISTIO_INIT] },
  { name: 'apply', argv: [BIN, ...ISTIO_INIT, '--netns', nsPath], ...freshNs },
  { name: 'cni add', argv: [CNI_BIN], env: cniEnv, stdin: cniConf({ exclude_namespaces: [] }), ...freshNs },
], Math.max(10, Math.floor(RUNS / 2)));
const beyond = apply.apply.wall_ms - apply['dry-run'].wall_ms;
rows.push(['(c) apply (`--netns`) beyond its dry-run vs bare `iptables-restore` of the same text', `${beyond.toFixed(1)} / ${apply.restore.wall_ms.toFixed(1)} ms`, fmt(ratio(beyond, apply.restore.wall_ms)), '≤ 1.5']);
// The init-container case: meshcap runs inside the pod's namespace (here through `ip netns exec`, for all three).
const inNs = (argv) => ['ip', 'netns', 'exec', ns, ...argv];
const init = measure([
  { name: 'restore', argv: inNs(['iptables-nft-restore', '--noflush']), stdin: restoreText, ...freshNs },
  { name: 'dry-run', argv: inNs([BIN, '-n', ...ISTIO_INIT]), ...freshNs },
  { name: 'apply', argv: inNs([BIN, ...ISTIO_INIT]), ...freshNs },
], Math.max(10, Math.floor(RUNS / 2)));
const beyondInit = init.apply.wall_ms - init['dry-run'].wall_ms;
rows.push(['(c) apply in the pod\'s own namespace (istio-init) beyond its dry-run vs bare restore', `${beyondInit.toFixed(1)} / ${init.restore.wall_ms.toFixed(1)} ms`, fmt(ratio(beyondInit, init.restore.wall_ms)), '≤ 1.5']);
const beyondAdd = apply['cni add'].wall_ms - apply['dry-run'].wall_ms;
rows.push(['(d) `meshcap-cni` enrolled ADD beyond the dry-run vs bare restore', `${beyondAdd.toFixed(1)} / ${apply.restore.wall_ms.toFixed(1)} ms`, fmt(ratio(beyondAdd, apply.restore.wall_ms)), '≤ 1.5']);
const cniFloor = apply['dry-run'].wall_ms + apply.restore.wall_ms;
rows.push(['(d) `meshcap-cni` ADD (sidecar, applied) vs its dry-run + bare restore', `${apply['cni add'].wall_ms.toFixed(1)} / ${cniFloor.toFixed(1)} ms`, fmt(ratio(apply['cni add'].wall_ms, cniFloor)), '≤ 1.2']);

// (e) scale, in-process.
const dir = mkdtempSync(join(tmpdir(), 'meshcap-bench-'));
try {
  await build({ entryPoints: ['bench/scale.ts'], bundle: true, platform: 'node', format: 'esm', outfile: join(dir, 'scale.mjs'), logLevel: 'error', banner: { js: "import { createRequire as __c } from 'node:module'; const require = __c(import.meta.url);" } });
  const scale = JSON.parse(execFileSync(NODE, [join(dir, 'scale.mjs')], { encoding: 'utf8' }));
  rows.push(['(e) plan + render, 20k vs 2k CIDRs and ports', `${scale.large.toFixed(1)} / ${scale.small.toFixed(1)} ms`, fmt(scale.ratio), '≤ 12']);
  rows.push(['(e) 10k CIDRs + 10k ports applied', scale.applied, '', 'correct']);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// (f) processes per apply, from the apply's own report.
const processes = (args) => {
  execFileSync('sh', ['-c', `ip netns add ${ns} && ip -n ${ns} link set lo up`]);
  try {
    const out = execFileSync('sh', ['-c', `${BIN} ${args.map((a) => `'${a}'`).join(' ')} --netns ${nsPath} 2>&1 >/dev/null`], { encoding: 'utf8' });
    const line = out.split('\n').find((l) => l.includes('"msg":"applied"'));
    return line ? JSON.parse(line).processes : 'n/a';
  } finally {
    execFileSync('ip', ['netns', 'del', ns]);
  }
};
const processesInNs = (args) => {
  execFileSync('sh', ['-c', `ip netns add ${ns} && ip -n ${ns} link set lo up`]);
  try {
    const out = execFileSync('sh', ['-c', `ip netns exec ${ns} ${BIN} ${args.map((a) => `'${a}'`).join(' ')} 2>&1 >/dev/null`], { encoding: 'utf8' });
    const line = out.split('\n').find((l) => l.includes('"msg":"applied"'));
    return line ? JSON.parse(line).processes : 'n/a';
  } finally {
    execFileSync('ip', ['netns', 'del', ns]);
  }
};
rows.push(['(f) processes per apply: istio-init in the pod\'s namespace, IPv4', String(processesInNs(ISTIO_INIT)), '', '≤ 1 (the restore)']);
rows.push(['(f) processes per apply: `--netns`, IPv4', String(processes(ISTIO_INIT)), '', '≤ 1 (the restore)']);
rows.push(['(f) processes per apply: `--netns`, istio-init, IPv4 + IPv6', String(processes([...ISTIO_INIT.slice(0, -2), '--ipv6', 'on'])), '', '≤ 2 (the restores; ::6 by rtnetlink)']);
rows.push(['(f) processes per apply: `--netns`, TPROXY, IPv4 + IPv6', String(processes(['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '-i', '*', '--ipv6', 'on'])), '', '≤ 2 (the restores; rules and routes by rtnetlink)']);

const cpu = execFileSync('sh', ['-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: 'utf8' }).trim();
const header = `Measured ${new Date().toISOString().slice(0, 10)} on ${cpu} (${execFileSync('nproc', { encoding: 'utf8' }).trim()} cores), Node ${process.version}, bun ${execFileSync('node_modules/.bin/bun', ['--version'], { encoding: 'utf8' }).trim()}, ${RUNS} alternating runs (medians).`;
const table = ['| benchmark | measured | ratio | target |', '| --- | --- | --- | --- |', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
// The sections of bench:agent and bench:nft (after the main table) are kept as they are.
const previous = readFileSync('bench/results.md', 'utf8');
const sections = previous.indexOf('\n### ') < 0 ? '' : previous.slice(previous.indexOf('\n### '));
writeFileSync('bench/results.md', `${header}\n\n${table}\n${sections}`);
console.log(`${header}\n\n${table}`);

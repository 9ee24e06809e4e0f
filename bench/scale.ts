// (e) plan + render at scale, in-process: 2,000 vs 20,000 excluded CIDRs and ports; then 10,000 of each
// applied into a throwaway namespace, checked against the kernel's own iptables-save.
import { execFileSync } from 'node:child_process';
import { loadCommand } from '../src/commands/load.js';
import { fakeHostForBench } from './fake-host.js';
import { renderRestore } from '../src/render/restore.js';
import { renderSaveFamily } from '../src/render/save.js';
import { applyPlan } from '../src/exec/apply.js';
import { createSpawnRunner } from '../src/exec/spawn-runner.js';
import { createLogger } from '../src/log.js';

function flags(n: number): Record<string, string> {
  const cidrs = Array.from({ length: n }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.0/24`);
  const ports = Array.from({ length: n }, (_, i) => String((i % 65000) + 1));
  return { dryRun: 'true', ipv6: 'off', outboundInclude: '*', outboundExclude: cidrs.join(','), outboundExcludePorts: ports.join(','), proxyUid: '1337' };
}

function planAndRender(n: number) {
  const { plan } = loadCommand('sidecar', flags(n), {}, fakeHostForBench);
  return { plan, text: renderRestore(plan, 'ipv4'), save: renderSaveFamily(plan, 'ipv4') };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const timed = (n: number) => {
  const t = performance.now();
  planAndRender(n);
  return performance.now() - t;
};

// Warm the JIT at both sizes, then alternate so GC and noise hit both alike.
timed(2000);
timed(20000);
const smallRuns: number[] = [];
const largeRuns: number[] = [];
for (let i = 0; i < 7; i++) {
  smallRuns.push(timed(2000));
  largeRuns.push(timed(20000));
}
const small = median(smallRuns);
const large = median(largeRuns);

let applied = 'not run (needs root)';
if (process.getuid?.() === 0) {
  const ns = `mcbench-${process.pid}`;
  execFileSync('ip', ['netns', 'add', ns]);
  try {
    const { plan, save } = planAndRender(10000);
    const log = createLogger({ level: 'silent', format: 'json' });
    const t = performance.now();
    await applyPlan(createSpawnRunner(`/run/netns/${ns}`), plan, { reconcile: false, forceApply: false, forcedBackend: 'nft' }, log);
    const ms = performance.now() - t;
    const kernel = execFileSync('ip', ['netns', 'exec', ns, 'iptables-nft-save'], { encoding: 'utf8', maxBuffer: 1 << 28 }).split('\n').filter((l) => l && !l.startsWith('#')).join('\n');
    applied = kernel === save.join('\n') ? `10,000+10,000 applied in ${ms.toFixed(0)} ms; iptables-save equals the dry-run (${save.length} lines)` : 'MISMATCH between iptables-save and the dry-run';
  } finally {
    execFileSync('ip', ['netns', 'del', ns]);
  }
}
process.stdout.write(JSON.stringify({ small, large, ratio: large / small, applied }));

/**
 * The kernel's own account of a walk, as a second witness for trace: `xtables-monitor --trace` in the pod
 * namespace (nft backend only; operator-tools §3.2) prints every rule a TRACE-marked packet matched.
 */
import { execa } from 'execa';
import type { Netns } from '../helpers/netns.js';

/** A port nothing listens on: the connections that tell us the monitor is running. */
const READY_PORT = 7;

async function waitFor(check: () => boolean, poke: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (check()) return;
    await poke();
  }
  throw new Error('xtables-monitor --trace never showed the readiness probe');
}

/**
 * Runs `connect` with TRACE on TCP to `ports` (raw OUTPUT and PREROUTING) and returns the rules the kernel
 * reports, as `table -A CHAIN …`, in order, without the TRACE rules themselves. Marks the namespace (test only).
 */
export async function kernelWalk(ns: Netns, ports: readonly number[], connect: () => Promise<unknown>): Promise<string[]> {
  const traceRules = [READY_PORT, ...ports].flatMap((port) => ['OUTPUT', 'PREROUTING'].map((chain) => [chain, '-p', 'tcp', '--dport', String(port), '-j', 'TRACE']));
  for (const rule of traceRules) await ns.run('iptables-nft', ['-t', 'raw', '-I', ...rule.slice(0, 1), '1', ...rule.slice(1)]);
  const monitor = execa('ip', ['netns', 'exec', ns.name, 'xtables-monitor', '--trace'], { reject: false, buffer: false, stdin: 'ignore' });
  let out = '';
  monitor.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const probe = () => ns.tryRun('/usr/bin/python3', ['-c', `import socket\ntry: socket.create_connection(("127.0.0.1", ${READY_PORT}), 0.2)\nexcept OSError: pass`]);
  try {
    await waitFor(() => out.includes(`DPORT=${READY_PORT} `), probe);
    out = '';
    await connect();
    // The walk's last events may still be on their way: wait until a fresh readiness probe shows after them.
    await waitFor(() => out.includes(`DPORT=${READY_PORT} `), probe);
  } finally {
    if (monitor.pid !== undefined) monitor.kill('SIGKILL');
    await monitor;
    for (const rule of traceRules) await ns.tryRun('iptables-nft', ['-t', 'raw', '-D', ...rule]);
  }
  return rulesOf(out);
}

/** `table -A CHAIN …` of every rule event, in order, leaving out the readiness probes' packets and TRACE rules. */
function rulesOf(out: string): string[] {
  const lines = out.split('\n');
  const probeIds = new Set(lines.flatMap((l) => {
    const m = /^PACKET: \d+ (\S+) .*DPORT=(\d+) /.exec(l);
    return m !== null && m[2] === String(READY_PORT) ? [m[1]] : [];
  }));
  const rules: string[] = [];
  for (const line of lines) {
    const m = /^ TRACE: \d+ (\S+) \S+:rule:\S+\s+-[46] -t (\w+) (-A .*)$/.exec(line);
    if (m === null || probeIds.has(m[1] ?? '') || m[3]?.endsWith('-j TRACE')) continue;
    const entry = `${m[2]} ${m[3]}`;
    if (!rules.includes(entry)) rules.push(entry);
  }
  return rules;
}

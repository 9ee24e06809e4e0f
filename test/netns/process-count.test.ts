import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { probeNamespace } from '../../src/exec/native.js';
import { netnsPool, requireRoot, type Netns } from '../helpers/netns.js';
import { cniInvocation, INJECTED_POD } from '../helpers/cni.js';
import { nftListing } from '../helpers/nft.js';
import { entryCommand } from '../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { FOREIGN_V4 } from '../fixtures/foreign-rules.js';

requireRoot();

/**
 * Processes per apply are behaviour, not timing: each run here is traced with `strace -f -e trace=execve`,
 * and the child processes are the distinct PIDs that exec'd something besides meshcap itself (nsenter
 * exec'ing the tool is one process). A fresh pod costs exactly its one restore or its one nft.
 */
async function traced(argv: readonly string[], opts: { env?: Record<string, string>; input?: string; inNetns?: Netns } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mcstrace-'));
  try {
    const log = join(dir, 'log');
    const inside = opts.inNetns === undefined ? [] : ['ip', 'netns', 'exec', opts.inNetns.name];
    const r = await execa(inside[0] ?? 'strace', [...inside.slice(1), ...(inside.length > 0 ? ['strace'] : []), '-f', '-qq', '-e', 'trace=execve', '-o', log, ...argv], { reject: false, env: opts.env ?? {}, input: opts.input ?? '' });
    const lines = readFileSync(log, 'utf8').split('\n').filter((l) => / execve\("/.test(l) && !l.includes('= -1 '));
    const pids = [...new Set(lines.map((l) => l.split(/\s+/)[0]))];
    const programs = (pid: string | undefined) => lines.filter((l) => l.startsWith(`${pid} `)).map((l) => /execve\("([^"]+)"/.exec(l)?.[1]?.split('/').pop() ?? '');
    return { ...r, children: pids.slice(1).map((p) => programs(p).at(-1) ?? '') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** TPROXY with both captures on (the routed sidecar config). */
const TPROXY = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '-i', '*'];

const meshcap = (ns: Netns, args: readonly string[], env: Record<string, string> = {}) => {
  const { file, args: pre } = entryCommand();
  return traced([file, ...pre, ...args, '--netns', ns.path], { env });
};

describe('processes per apply of a fresh pod', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);

  it('istio-init with --netns (iptables-nft): the one iptables-nft-restore', async () => {
    const ns = await pool.make('mcpc');
    const r = await meshcap(ns, [...ISTIO_INIT_ARGS, '--ipv6', 'off']);
    expect(r.exitCode).toBe(0);
    expect(r.children).toEqual(['iptables-nft-restore']);
  });

  it('without the native calls reads with processes (nsenter, the saves) and reaches the same rules', async () => {
    const fast = await pool.make('mcpcfast');
    const slow = await pool.make('mcpcslow');
    const args = [...ISTIO_INIT_ARGS, '--ipv6', 'on'];
    expect((await meshcap(fast, args)).exitCode).toBe(0);
    const r = await meshcap(slow, args, { MESHCAP_NATIVE: 'spawn' });
    expect(r.exitCode).toBe(0);
    expect(r.children).toEqual(expect.arrayContaining(['iptables-nft-save', 'ip6tables-nft-save', 'iptables-nft-restore', 'ip6tables-nft-restore']));
    for (const cmd of ['iptables-save', 'ip6tables-save']) {
      const rules = async (ns: Netns) => (await ns.run(cmd, [])).stdout.split('\n').filter((l) => !l.startsWith('#')).join('\n');
      expect(await rules(slow)).toBe(await rules(fast));
    }
  });

  it('istio-init inside the pod (no --netns): the one iptables-nft-restore', async () => {
    const ns = await pool.make('mcpcin');
    const { file, args } = entryCommand();
    const r = await traced([file, ...args, ...ISTIO_INIT_ARGS, '--ipv6', 'off'], { inNetns: ns });
    expect(r.exitCode).toBe(0);
    expect(r.children).toEqual(['iptables-nft-restore']);
  });

  it('native nftables with --netns, REDIRECT and a routed ambient config: the one nft (routing by rtnetlink)', async () => {
    const ns = await pool.make('mcpcnft');
    const redirect = await meshcap(ns, ['--native-nftables', ...ISTIO_INIT_ARGS, '--ipv6', 'off']);
    expect(redirect.exitCode).toBe(0);
    expect(redirect.children).toEqual(['nft']);
    const other = await pool.make('mcpcamb');
    const ambient = await meshcap(other, ['ambient', '--native-nftables', '--inbound', 'redirect', '--ipv6', 'on']);
    expect(ambient.exitCode).toBe(0);
    expect(ambient.children).toEqual(['nft']);
    expect((await other.run('ip', ['-6', 'rule', 'show'])).stdout).toContain('fwmark 0x111/0xfff lookup 100');
  });

  it('routed configs with --netns: TPROXY IPv4 + IPv6 and istio-init with its ::6 — the restores, no ip', async () => {
    const ns = await pool.make('mcpctp');
    const tproxy = await meshcap(ns, [...TPROXY, '--ipv6', 'on']);
    expect(tproxy.exitCode).toBe(0);
    expect(tproxy.children).toEqual(['iptables-nft-restore', 'ip6tables-nft-restore']);
    expect(tproxy.stderr).toMatch(/"processes":2[,}]/);
    expect((await ns.run('ip', ['-6', 'route', 'show', 'table', '133'])).stdout).toContain('local default dev lo');
    const v6 = await pool.make('mcpcv6');
    const init = await meshcap(v6, [...ISTIO_INIT_ARGS, '--ipv6', 'on']);
    expect(init.exitCode).toBe(0);
    expect(init.children).toEqual(['iptables-nft-restore', 'ip6tables-nft-restore']);
    expect((await v6.run('ip', ['-6', 'address', 'show', 'dev', 'lo'])).stdout).toContain('::6/128');
  });

  it('istio-init with IPv6 inside the pod (no --netns): the two restores, ::6 by rtnetlink', async () => {
    const ns = await pool.make('mcpcin6');
    const { file, args } = entryCommand();
    const r = await traced([file, ...args, ...ISTIO_INIT_ARGS, '--ipv6', 'on'], { inNetns: ns });
    expect(r.exitCode).toBe(0);
    expect(r.children).toEqual(['iptables-nft-restore', 'ip6tables-nft-restore']);
    expect((await ns.run('ip', ['-6', 'address', 'show', 'dev', 'lo'])).stdout).toContain('::6/128');
  });

  it('without the native calls routing runs ip -batch again (look and change per family) to the same routing', async () => {
    const fast = await pool.make('mcpcrf');
    const slow = await pool.make('mcpcrs');
    const args = [...TPROXY, '--ipv6', 'on'];
    expect((await meshcap(fast, args)).exitCode).toBe(0);
    const r = await meshcap(slow, args, { MESHCAP_NATIVE: 'spawn' });
    expect(r.exitCode).toBe(0);
    expect(r.children.filter((c) => c === 'ip')).toEqual(['ip', 'ip', 'ip', 'ip']);
    const shown = async (ns: Netns) => (await Promise.all([['-4', 'rule'], ['-6', 'rule'], ['-4', 'route', 'show', 'table', 'all'], ['-6', 'route', 'show', 'table', 'all'], ['-j', 'address', 'show', 'dev', 'lo']].map((a) => ns.run('ip', a)))).map((p) => p.stdout);
    expect(await shown(slow)).toEqual(await shown(fast));
  });

  it('meshcap-cni ADD of an injected pod: the one iptables-nft-restore', async () => {
    const ns = await pool.make('mcpccni');
    const { argv, env, input } = cniInvocation('ADD', ns, INJECTED_POD, { id: 'pc0' });
    const r = await traced(argv, { env, input });
    expect(r.stdout).not.toContain('"code"');
    expect(r.children).toEqual(['iptables-nft-restore']);
  });
});

describe('native nftables re-apply of an unchanged config', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);

  it('changes nothing — same listing, same table order behind a foreign table, counters kept — with one read', async () => {
    const ns = await pool.make('mcpcre');
    const args = ['--native-nftables', '-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '-i', '*', '--ipv6', 'on'];
    expect((await meshcap(ns, args)).exitCode).toBe(0);
    await ns.run('nft', ['add', 'table', 'inet', 'foreign']);
    await ns.run('nft', ['add', 'chain', 'inet', 'foreign', 'out', '{ type filter hook output priority -150; }']);
    // One connection attempt on lo moves the output chains' counters.
    await ns.run('python3', ['-c', "import socket; s = socket.socket(); s.settimeout(0.5); s.connect_ex(('127.0.0.1', 9))"]);
    const before = await nftListing(ns, []);
    expect(before).toMatch(/counter packets [1-9]/);
    expect(before.indexOf('table inet istio-proxy-mangle')).toBeLessThan(before.indexOf('table inet foreign'));
    const again = await meshcap(ns, args);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain('"action":"unchanged"');
    expect(again.children.filter((c) => c === 'nft')).toEqual(['nft']);
    expect(await nftListing(ns, [])).toBe(before);
  });

  it('still rewrites a changed config in one transaction, and a shrunk one leaves no table it no longer needs', async () => {
    const ns = await pool.make('mcpcsh');
    const dns = ['ambient', '--native-nftables', '--inbound', 'redirect', '--ipv6', 'off'];
    expect((await meshcap(ns, [...dns, '--redirect-dns'])).exitCode).toBe(0);
    expect(await nftListing(ns)).toContain('table inet istio-ambient-raw');
    const shrink = await meshcap(ns, [...dns, '--redirect-dns=false']);
    expect(shrink.exitCode).toBe(0);
    expect(shrink.children.filter((c) => c === 'nft')).toEqual(['nft', 'nft']);
    expect(await nftListing(ns)).not.toContain('table inet istio-ambient-raw');
  });
});

describe('the in-process probe answers as the processes do', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);

  /** What `nft list tables` and the namespace's /proc say, read with processes. */
  async function byProcesses(ns: Netns) {
    const tables = (await ns.run('nft', ['list', 'tables'])).stdout.split('\n').filter(Boolean).map((l) => l.replace(/^table /, ''));
    const names = async (f: string) => (await ns.tryRun('cat', [`/proc/self/net/${f}`])).stdout;
    return { tables: tables.sort(), ipv4: await names('ip_tables_names'), ipv6: await names('ip6_tables_names') };
  }

  async function byProbe(ns: Netns) {
    const p = await probeNamespace(ns.path);
    expect(p).toBeDefined();
    return { tables: (p?.nftTables ?? []).map((t) => `${t.family} ${t.name}`).sort(), ipv4: (p?.legacyTables.ipv4 ?? '').trim(), ipv6: (p?.legacyTables.ipv6 ?? '').trim() };
  }

  it('on a fresh namespace, after an apply, with foreign iptables (both backends) and native tables', async () => {
    const ns = await pool.make('mcprobe');
    const compare = async () => {
      const want = await byProcesses(ns);
      expect(await byProbe(ns)).toEqual({ ...want, ipv4: want.ipv4.trim(), ipv6: want.ipv6.trim() });
    };
    await compare();
    const { file, args } = entryCommand();
    expect((await execa(file, [...args, ...ISTIO_INIT_ARGS, '--ipv6', 'on', '--netns', ns.path], { reject: false })).exitCode).toBe(0);
    await compare();
    await ns.run('iptables-legacy-restore', ['--noflush'], { input: FOREIGN_V4 });
    await ns.run('nft', ['add', 'table', 'ip6', 'foreign6']);
    await ns.run('nft', ['add', 'table', 'bridge', 'foreignbr']);
    await compare();
    expect((await byProbe(ns)).tables).toEqual(expect.arrayContaining(['ip nat', 'ip6 nat', 'ip6 foreign6', 'bridge foreignbr']));
    expect((await byProbe(ns)).ipv4).toContain('nat');
  });
});

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FOREIGN_V4, FOREIGN_V6 } from '../fixtures/foreign-rules.js';
import { meshcapIn } from '../helpers/meshcap.js';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { nftListing } from '../helpers/nft.js';
import { entryCommand } from '../helpers/paths.js';
import { planFor } from '../helpers/plan.js';
import type { Plan } from '../../src/model/plan.js';
import { renderNftApply } from '../../src/render/nft-apply.js';
import { buildNftTables } from '../../src/render/nft-transaction.js';

requireRoot();

const NFT = '--native-nftables';
/** Three tables, both families, TPROXY routing and ::6 on lo. */
const BIG = [NFT, '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'TPROXY', '-b', '*', '-i', '203.0.113.0/24', '-c', 'eth4', '--redirect-dns', '--dns-servers', '192.0.2.53', '--drop-invalid', '--ipv6', 'on'];
/** One table (nat), IPv4 only. */
const SMALL = [NFT, '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-b', '8080', '-i', '*', '--ipv6', 'off'];
const FOREIGN_NFT = 'table inet foreign {\n\tchain keep {\n\t\ttype filter hook output priority 10; policy accept;\n\t\tip daddr 192.0.2.99 counter drop\n\t}\n}\ntable inet istio-proxy-other {\n\tchain c {\n\t}\n}\n';

async function dryRun(args: readonly string[]): Promise<string> {
  const { file, args: pre } = entryCommand();
  const r = await execa(file, [...pre, ...args, '-n'], { reject: false, stripFinalNewline: false });
  expect(r.exitCode).toBe(0);
  return r.stdout;
}

async function applied(ns: Netns, args: readonly string[], env: Record<string, string> = {}) {
  const r = await meshcapIn(ns, args, env);
  expect(r.stderr).not.toContain('"level":50');
  expect(r.exitCode).toBe(0);
  return r;
}

async function routing(ns: Netns): Promise<string> {
  const parts = await Promise.all([['-4', 'rule'], ['-6', 'rule'], ['-4', 'route', 'show', 'table', 'all'], ['-6', 'route', 'show', 'table', 'all'], ['addr', 'show', 'dev', 'lo']].map((a) => ns.run('ip', a)));
  return parts.map((p) => p.stdout).join('\n');
}

async function iptablesSaves(ns: Netns): Promise<string> {
  const out = await Promise.all(['iptables-nft-save', 'ip6tables-nft-save', 'iptables-legacy-save', 'ip6tables-legacy-save'].map((c) => ns.run(c, [])));
  return out.map((o) => o.stdout.split('\n').filter((l) => !l.startsWith('#')).join('\n')).join('\n---\n');
}

describe('native nftables lifecycle in a throwaway namespace', () => {
  let ns: Netns | undefined;
  beforeEach(async () => {
    ns = await createNetns('mcnft');
    await ns.run('ip', ['link', 'set', 'lo', 'up']);
  });
  afterEach(async () => {
    await deleteNetns(ns);
  });

  it('leaves the ruleset and the routing identical when the same config is applied again', async () => {
    await applied(ns!, BIG);
    const first = { rules: await nftListing(ns!, []), routes: await routing(ns!) };
    expect(first.rules).toContain('table inet istio-proxy-raw');
    expect(first.routes).toMatch(/fwmark 0x539 lookup 133/);
    await applied(ns!, BIG);
    expect(await nftListing(ns!, [])).toBe(first.rules);
    expect(await routing(ns!)).toBe(first.routes);
  });

  it('removes the tables and chains a smaller config no longer needs, in the same transaction', async () => {
    await applied(ns!, BIG);
    await applied(ns!, SMALL);
    const listing = await nftListing(ns!);
    expect(listing).toBe(await dryRun(SMALL));
    expect(listing).not.toMatch(/istio-proxy-(mangle|raw)|istio-output-dns/);
  });

  it('removes the raw table when ambient DNS capture is turned off (upstream keeps it)', async () => {
    const base = ['ambient', NFT, '--inbound', 'redirect', '--ipv6', 'off'];
    await applied(ns!, [...base, '--redirect-dns']);
    expect(await nftListing(ns!)).toContain('table inet istio-ambient-raw');
    await applied(ns!, base);
    expect(await nftListing(ns!)).toBe(await dryRun(base));
  });

  it('cleans up exactly its tables and routing, leaving foreign nft tables and iptables rules byte-identical', async () => {
    await ns!.run('iptables-nft-restore', [], { input: FOREIGN_V4 });
    await ns!.run('ip6tables-legacy-restore', [], { input: FOREIGN_V6 });
    await ns!.run('nft', ['-f', '-'], { input: FOREIGN_NFT });
    const before = { nft: await nftListing(ns!), ipt: await iptablesSaves(ns!), routes: await routing(ns!) };
    await applied(ns!, BIG);
    expect(await nftListing(ns!)).toContain('table inet istio-proxy-mangle');
    await applied(ns!, [...BIG, '--cleanup-only']);
    expect(await nftListing(ns!)).toBe(before.nft);
    expect(await iptablesSaves(ns!)).toBe(before.ipt);
    expect(await routing(ns!)).toBe(before.routes);
  });

  it('changes nothing when the transaction fails midway (nft is atomic)', async () => {
    await applied(ns!, SMALL);
    const before = await nftListing(ns!);
    const dir = mkdtempSync(join(tmpdir(), 'mcnftbad-'));
    try {
      // An nft that runs meshcap's whole transaction plus one rule the kernel rejects at its end.
      const real = (await execa('sh', ['-c', 'command -v nft'])).stdout.trim();
      writeFileSync(join(dir, 'nft'), `#!/bin/sh\n{ cat; echo 'add rule inet istio-proxy-nat output jump no-such-chain'; } | exec ${real} "$@"\n`);
      chmodSync(join(dir, 'nft'), 0o755);
      const r = await meshcapIn(ns!, BIG, { PATH: `${dir}:${process.env['PATH'] ?? ''}` });
      expect(r.exitCode).toBe(4);
      expect(r.stderr).toMatch(/nft -f - failed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await nftListing(ns!)).toBe(before);
  });

  it('puts the previous tables back when the routing step fails after the nft transaction', async () => {
    await applied(ns!, SMALL);
    const before = await nftListing(ns!);
    // The kernel refuses IPv6's local route while lo is down (rtnetlink, in-process).
    await ns!.run('ip', ['link', 'set', 'lo', 'down']);
    const r = await meshcapIn(ns!, BIG);
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toMatch(/rtnetlink RTM_NEWROUTE local ::\/0 dev lo table 133 \(ipv6\) failed: Network is down/);
    expect(r.stderr).toMatch(/put the nft tables back as they were/);
    expect(await nftListing(ns!)).toBe(before);
  });

  it('puts the previous tables back when routing through ip (no native calls) fails after the nft transaction', async () => {
    await applied(ns!, SMALL);
    const before = await nftListing(ns!);
    const dir = mkdtempSync(join(tmpdir(), 'mcnftip-'));
    try {
      // An ip that answers the routing look-ups (-j) and refuses every change, as a kernel without the rights would.
      const real = (await execa('sh', ['-c', 'command -v ip'])).stdout.trim();
      writeFileSync(join(dir, 'ip'), `#!/bin/sh\ncase " $* " in *" -j "*) exec ${real} "$@";; esac\ncat >/dev/null; echo 'RTNETLINK answers: Operation not permitted' >&2; exit 2\n`);
      chmodSync(join(dir, 'ip'), 0o755);
      const r = await meshcapIn(ns!, BIG, { PATH: `${dir}:${process.env['PATH'] ?? ''}`, MESHCAP_NATIVE: 'spawn' });
      expect(r.exitCode).toBe(4);
      expect(r.stderr).toMatch(/put the nft tables back as they were/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await nftListing(ns!)).toBe(before);
  });

  it('warns when iptables capture rules and the native tables are both present', async () => {
    await applied(ns!, ['-p', '15001', '-z', '15006', '-u', '1337', '-b', '*', '-i', '*', '--ipv6', 'off', '--force-iptables-binary', 'nft']);
    const r = await applied(ns!, SMALL);
    expect(r.stderr).toMatch(/iptables capture rules are present next to the native nftables tables/);
    expect(r.stderr).toContain('ip nat ISTIO_OUTPUT');
  });

  it('applies a REDIRECT config with exactly one process and no warning in a clean namespace', async () => {
    const r = await applied(ns!, [...SMALL, '--log_output_level', 'default:info']);
    expect(r.stderr).not.toMatch(/iptables capture rules/);
    expect(r.stderr).toMatch(/"msg":"applied"/);
    expect(r.stderr).toMatch(/"processes":1[,}]/);
  });

  it("replaces a reused pod IP's comment in the probe set, where a bare add element keeps the old one", async () => {
    const base = planFor(['ambient-host', NFT, '--kubelet-uid', '0', '--ipv6', 'off', '--add-pod-ip', '192.0.2.5']);
    const commented = (comment: string): Plan => ({ ...base, ipsets: base.ipsets.map((s) => ({ ...s, add: s.add.map((a) => ({ ...a, comment })) })) });
    for (const comment of ['pod-a/eth0', 'pod-b/eth0']) {
      const plan = commented(comment);
      await ns!.run('nft', ['-f', '-'], { input: renderNftApply('ambient-host', plan, buildNftTables(plan, { mode: 'ambient-host', kubeletUid: 0 })) });
    }
    expect(await nftListing(ns!)).toContain('elements = { 192.0.2.5 comment "pod-b/eth0" }');
    // The kernel fact behind the bug (istio-nftables.md §5): upstream's bare `add element` keeps the comment.
    await ns!.run('nft', ['-f', '-'], { input: 'add element inet istio-ambient-nat istio-inpod-probes-v4 { 192.0.2.5 comment "pod-c/eth0" }\n' });
    expect(await nftListing(ns!)).toContain('elements = { 192.0.2.5 comment "pod-b/eth0" }');
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findKubeletUid } from '../../../src/config/kubelet.js';
import { EnvironmentError } from '../../../src/errors.js';
import { findIptablesCaptureChains } from '../../../src/exec/nft-apply.js';
import { runCli } from '../../helpers/cli.js';
import { expectConfigError } from '../../helpers/errors.js';
import { planFor } from '../../helpers/plan.js';
import { renderNftApply } from '../../../src/render/nft-apply.js';
import { buildNftTables } from '../../../src/render/nft-transaction.js';

const NBASE = ['--native-nftables', '-n', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337'];

describe('native nftables rendering where meshcap departs from upstream', () => {
  it('leaves out the DNS jumps of a family that is off, so IPv6-only nameservers with IPv6 off still load (§7.3)', async () => {
    const res = await runCli([...NBASE, '--redirect-dns', '--dns-servers', '2001:db8::53', '--ipv6', 'off', '--dry-run-format', 'istio']);
    expect(res.code).toBe(0);
    expect(res.stdout).not.toMatch(/istio-proxy-nat .*jump istio-output-dns/);
    expect(res.stdout).not.toMatch(/istio-proxy-raw prerouting .*jump istio-inbound/);
    expect(res.stdout).not.toContain('2001:db8::53');
  });

  it('prints the cleanup transaction of CASES.md §7.6 for --cleanup-only', async () => {
    const res = await runCli([...NBASE, '--ipv6', 'off', '--cleanup-only', '--dry-run-format', 'istio']);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(['nat', 'mangle', 'raw'].map((t) => `add table inet istio-proxy-${t}\ndelete table inet istio-proxy-${t}\n`).join(''));
  });
});

describe("the node side's transaction", () => {
  const HOST = ['ambient-host', '--native-nftables', '--kubelet-uid', '0', '--ipv6', 'off'];
  const applyText = (extra: string[]) => {
    const plan = planFor([...HOST, ...extra]);
    return renderNftApply('ambient-host', plan, buildNftTables(plan, { mode: 'ambient-host', kubeletUid: 0 }));
  };

  it('creates the probe set before the rules that match it, in the same transaction', () => {
    const lines = applyText([]).split('\n');
    const set = lines.findIndex((l) => l.startsWith('add set inet istio-ambient-nat istio-inpod-probes-v4 '));
    const rule = lines.findIndex((l) => l.includes('@istio-inpod-probes-v4'));
    expect(set).toBeGreaterThan(0);
    expect(rule).toBeGreaterThan(set);
  });

  it('replaces an element (add, delete, add) so a reused pod IP never keeps an old comment, and removes safely', () => {
    const text = applyText(['--add-pod-ip', '10.244.0.5', '--remove-pod-ip', '10.244.0.6']);
    const set = 'inet istio-ambient-nat istio-inpod-probes-v4';
    expect(text).toContain(`add element ${set} { 10.244.0.5 }\ndelete element ${set} { 10.244.0.5 }\nadd element ${set} { 10.244.0.5 }\n`);
    expect(text).toContain(`add element ${set} { 10.244.0.6 }\ndelete element ${set} { 10.244.0.6 }\n`);
    expect(text).not.toContain('delete table');
  });
});

describe('native nftables inputs', () => {
  it('refuses --inbound tproxy for ambient in nft mode, naming the flag', async () => {
    expectConfigError(await runCli(['ambient', '--native-nftables', '--inbound', 'tproxy', '-n', '--ipv6', 'off']), '--inbound', 'tproxy');
  });

  it('chooses the redirect layout for ambient in nft mode when --inbound is not given', async () => {
    const res = await runCli(['ambient', '--native-nftables', '-n', '--ipv6', 'off', '--dry-run-format', 'istio']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('redirect to :15006');
  });

  it.each([['0eth'], ['eth@1'], ['eth+']])('refuses the interface name %s, which nft cannot read unquoted', async (name) => {
    expectConfigError(await runCli([...NBASE, '--ipv6', 'off', '-c', name]), '--istio-exclude-interfaces', name);
  });

  it('accepts NATIVE_NFTABLES in Go bool forms', async () => {
    const res = await runCli(['-n', '--ipv6', 'off', '-u', '1337', '--dry-run-format', 'istio'], { NATIVE_NFTABLES: 'T' });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^add table inet istio-proxy-nat\n/);
  });

  it('refuses a bad --kubelet-uid, naming the flag', async () => {
    expectConfigError(await runCli(['ambient-host', '--native-nftables', '-n', '--ipv6', 'off', '--kubelet-uid', '-1']), '--kubelet-uid', '-1');
  });
});

describe('finding the kubelet UID in /proc', () => {
  function fakeProc(procs: Record<string, { comm: string; cmdline: string[]; uid: number }>): string {
    const root = mkdtempSync(join(tmpdir(), 'mcproc-'));
    for (const [pid, p] of Object.entries(procs)) {
      mkdirSync(join(root, pid));
      writeFileSync(join(root, pid, 'comm'), `${p.comm}\n`);
      writeFileSync(join(root, pid, 'cmdline'), `${p.cmdline.join('\0')}\0`);
      writeFileSync(join(root, pid, 'status'), `Name:\t${p.comm}\nUid:\t${p.uid}\t${p.uid}\t${p.uid}\t${p.uid}\n`);
    }
    return root;
  }

  it.each([
    ['kubelet', ['/usr/bin/kubelet', '--config=/var/lib/kubelet/config.yaml'], 0],
    ['kubelite', ['/snap/microk8s/kubelite', '--kubelet-args-file=x'], 4001],
    ['k3s', ['k3s', 'server'], 4002],
  ])('finds a %s process and returns its real UID', (comm, cmdline, uid) => {
    const root = fakeProc({ '7': { comm: 'sshd', cmdline: ['sshd'], uid: 9 }, '42': { comm, cmdline, uid } });
    try {
      expect(findKubeletUid(root)).toBe(uid);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('skips a kubelet-named process without "kubelet" in its command line and says to give --kubelet-uid', () => {
    const root = fakeProc({ '5': { comm: 'kubelite', cmdline: ['/bin/other'], uid: 3 } });
    try {
      expect(() => findKubeletUid(root)).toThrow(EnvironmentError);
      expect(() => findKubeletUid(root)).toThrow(/--kubelet-uid/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('spotting iptables capture chains in an nft chain listing', () => {
  it("names Istio's chains in iptables-nft tables and ignores our own inet tables", () => {
    const listing = 'table ip nat {\n\tchain ISTIO_OUTPUT {\n\t}\n\tchain KUBE-X {\n\t}\n}\ntable inet istio-proxy-nat {\n\tchain istio-output {\n\t}\n}\ntable ip6 mangle {\n\tchain ISTIO_DIVERT {\n\t}\n}\n';
    expect(findIptablesCaptureChains(listing)).toEqual(['ip nat ISTIO_OUTPUT', 'ip6 mangle ISTIO_DIVERT']);
  });
});

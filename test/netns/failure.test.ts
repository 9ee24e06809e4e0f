import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryCommand } from '../helpers/paths.js';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { saveOf } from '../helpers/meshcap.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { FOREIGN_V4, FOREIGN_V6 } from '../fixtures/foreign-rules.js';

requireRoot();

const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const REAL_RESTORE = '/usr/sbin/iptables-nft-restore';
export const faultFigures = { simulated: 0 };

/**
 * Failures and broken hosts, with fake binaries put first on PATH (they print iptables' real error messages):
 * each has a defined outcome — exit 4 with the error line and a hint (5 for a namespace that cannot be
 * entered, 143 for SIGTERM) — and every family back where it was, foreign rules byte-identical.
 */
describe('failures roll back', () => {
  let ns: Netns | undefined;
  let dir = '';

  beforeEach(async () => {
    ns = await createNetns('mcfail');
    await ns.run('ip', ['link', 'set', 'lo', 'up']);
    await ns.run('iptables-nft-restore', ['--noflush'], { input: FOREIGN_V4 });
    await ns.run('ip6tables-nft-restore', ['--noflush'], { input: FOREIGN_V6 });
    dir = mkdtempSync(join(tmpdir(), 'meshcap-fake-'));
  });
  afterEach(async () => {
    await deleteNetns(ns);
    rmSync(dir, { recursive: true, force: true });
  });

  const fake = (name: string, script: string) => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${script}\n`);
    chmodSync(join(dir, name), 0o755);
  };
  const meshcap = (args: readonly string[], path = `${dir}:${SYSTEM_PATH}`) =>
    execa(entryCommand().file, [...entryCommand().args, '--netns', ns!.path, '--force-iptables-binary', 'nft', ...args], { reject: false, env: { PATH: path }, extendEnv: false });
  const states = async () => ({ v4: await saveOf(ns!, 'ipv4', 'nft'), v6: await saveOf(ns!, 'ipv6', 'nft') });
  const failsWith = (line: string, code = 1) => `cat >/dev/null\necho "${line}" >&2\nexit ${code}`;

  const V6_FAILS = `cat >/dev/null
echo "ip6tables-restore v1.8.9 (nf_tables): Couldn't load match \\\`owner':No such file or directory" >&2
echo "Error occurred at line: 14" >&2
exit 1`;

  it('puts IPv4 back when the IPv6 restore fails on a clean pod, and exits 4 with the error and a hint', async () => {
    const before = await states();
    fake('ip6tables-nft-restore', V6_FAILS);
    const r = await meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on']);
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain("Couldn't load match");
    expect(r.stderr).toContain('hint');
    expect(await states()).toEqual(before);
  });

  it('puts the previous rule set back when the IPv6 restore of a reconcile fails', async () => {
    expect((await meshcap([...ISTIO_INIT_ARGS, '-c', 'eth2', '--ipv6', 'on'])).exitCode).toBe(0);
    const before = await states();
    fake('ip6tables-nft-restore', V6_FAILS);
    const r = await meshcap(['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '-i', '203.0.113.0/24', '-k', 'eth3', '--ipv6', 'on', '--reconcile']);
    expect(r.exitCode).toBe(4);
    expect(await states()).toEqual(before);
  });

  it('rolls back a restore that committed one table and failed on the next', async () => {
    const before = await states();
    // First call: only the first table block reaches the kernel, then iptables' error. Later calls (the
    // rollback) pass through.
    fake(
      'iptables-nft-restore',
      `if [ -e "${dir}/once" ]; then exec ${'/usr/sbin/iptables-nft-restore'} "$@"; fi
touch "${dir}/once"
awk '{print} /^COMMIT$/{exit}' | /usr/sbin/iptables-nft-restore "$@"
echo "iptables-restore: line 40 failed" >&2
exit 1`,
    );
    const r = await meshcap(['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '--ipv6', 'off']);
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('line 40 failed');
    expect(await states()).toEqual(before);
  });

  it('changes nothing and exits 4 naming ip6tables when an IPv6 pod has no ip6tables', async () => {
    for (const bin of ['nsenter', 'ip', 'iptables-nft-save', 'iptables-nft-restore', 'iptables-legacy-save', 'iptables-legacy-restore']) {
      symlinkSync(`/usr/sbin/${bin}`.replace('/usr/sbin/nsenter', '/usr/bin/nsenter'), join(dir, bin));
    }
    const before = await states();
    const r = await meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on'], dir);
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toMatch(/ip6tables\S* is not installed/);
    expect(await states()).toEqual(before);
  });

  it.each([
    ['a kernel without the nat table', "iptables-restore v1.8.9 (legacy): can't initialize iptables table \\`nat': Table does not exist (do you need to insmod?)", ISTIO_INIT_ARGS, 'kernel lacks'],
    ['a kernel without TPROXY', "iptables-restore v1.8.9 (nf_tables): Couldn't load target \\`TPROXY':No such file or directory", ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*'], 'kernel lacks'],
    ['a kernel without the owner match', "iptables-restore v1.8.9 (nf_tables): Couldn't load match \\`owner':No such file or directory", ISTIO_INIT_ARGS, 'kernel lacks'],
    ['the xtables lock held by another process', 'Another app is currently holding the xtables lock. Stopped waiting after 30s.', ISTIO_INIT_ARGS, 'xtables lock'],
  ])('%s: exit 4 with the error and a hint, nothing changed', async (_name, line, args, hint) => {
    const before = await states();
    fake('iptables-nft-restore', failsWith(line, 4));
    const r = await meshcap([...args, '--ipv6', 'off']);
    faultFigures.simulated++;
    expect(r.exitCode).toBe(4);
    // The error line carries the tool's reason; its banner (`iptables-restore v1.8.9 (nf_tables): `) is left out.
    expect(r.stderr).toContain(line.replace(/\\`/g, '`').replace(/^\S+ v[\d.]+ \([^)]*\): /, '').slice(0, 40));
    expect(r.stderr).toContain(hint);
    expect(await states()).toEqual(before);
  });

  it('iptables-restore missing altogether: exit 4, nothing changed', async () => {
    const before = await states();
    fake('iptables-nft-restore', 'exit 127');
    fake('iptables-nft-restore', `echo "sh: iptables-nft-restore: not found" >&2; exit 127`);
    const r = await meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'off']);
    faultFigures.simulated++;
    expect(r.exitCode).toBe(4);
    expect(await states()).toEqual(before);
  });

  it('a namespace that disappears during the apply: a clear error naming it, nothing left behind', async () => {
    // The IPv4 restore deletes the namespace (it lives on while the restore holds it); IPv6 cannot enter it.
    fake('iptables-nft-restore', `ip netns del ${ns!.name}\nexec ${REAL_RESTORE} "$@"`);
    const r = await meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on']);
    faultFigures.simulated++;
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain(ns!.path);
    expect((await execa('ip', ['netns', 'list'])).stdout).not.toContain(ns!.name);
  });

  it('SIGTERM during the apply: the running transaction ends, everything is put back, exit 143', async () => {
    const before = await states();
    fake('iptables-nft-restore', `sleep 1\nexec ${REAL_RESTORE} "$@"`);
    const run = meshcap([...ISTIO_INIT_ARGS, '--ipv6', 'on']);
    await new Promise((r) => setTimeout(r, 600));
    run.kill('SIGTERM');
    const r = await run;
    faultFigures.simulated++;
    expect(r.exitCode).toBe(143);
    expect(r.stderr).toContain('interrupted by SIGTERM');
    expect(await states()).toEqual(before);
  });
});

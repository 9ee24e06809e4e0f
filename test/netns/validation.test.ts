import { chmodSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { meshcapIn } from '../helpers/meshcap.js';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { IMPL, REPO_ROOT } from '../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';

requireRoot();

/**
 * `--run-validation --skip-rule-apply`, as the istio-validation container runs it: inside the pod's
 * namespace, as the proxy UID/GID. Exit 0 when the redirect works, 126 when it does not.
 */
describe('--run-validation', () => {
  let bundleDir = '';
  let ns: Netns | undefined;
  beforeAll(() => {
    // A copy the unprivileged test UID can read wherever the checkout lives.
    bundleDir = mkdtempSync(join(tmpdir(), 'meshcap-bin-'));
    cpSync(join(REPO_ROOT, 'dist'), bundleDir, { recursive: true });
    chmodSync(bundleDir, 0o755);
    for (const d of ['lib', 'bin']) if (existsSync(join(bundleDir, d))) chmodSync(join(bundleDir, d), 0o755);
  });
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));
  beforeEach(async () => {
    ns = await createNetns('mcval');
    await ns.run('ip', ['link', 'set', 'lo', 'up']);
  });
  afterEach(async () => {
    await deleteNetns(ns);
  });

  const validate = (uid: number, extra: readonly string[]) =>
    execa(
      'ip',
      ['netns', 'exec', ns!.name, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...(IMPL === 'bin' ? [join(bundleDir, 'bin', 'meshcap')] : [process.execPath, join(bundleDir, 'meshcap.cjs')]), '--run-validation', '--skip-rule-apply', ...extra],
      { reject: false },
    );

  it('passes as the proxy UID once the rules are in place, IPv4 and IPv6', async () => {
    expect((await meshcapIn(ns!, [...ISTIO_INIT_ARGS, '--ipv6', 'on'])).exitCode).toBe(0);
    const r = await validate(1337, ['-p', '15001', '-z', '15006', '--ipv6', 'on', '--probe-timeout', '5s']);
    expect(r.stderr).toContain('validation passed');
    expect(r.exitCode).toBe(0);
  });

  it('exits 126 when no rules redirect the probe', async () => {
    const r = await validate(1337, ['-p', '15001', '-z', '15006', '--ipv6', 'off', '--probe-timeout', '1500ms']);
    expect(r.exitCode).toBe(126);
    expect(r.stderr).toContain('was not redirected');
  });

  it('exits 126 when run as a UID the rules do not treat as the proxy', async () => {
    expect((await meshcapIn(ns!, [...ISTIO_INIT_ARGS, '--ipv6', 'off'])).exitCode).toBe(0);
    const r = await validate(4242, ['-p', '15001', '-z', '15006', '--ipv6', 'off', '--probe-timeout', '1500ms']);
    expect(r.exitCode).toBe(126);
  });

  it('refuses --run-validation with --netns (it probes the current namespace)', async () => {
    const r = await meshcapIn(ns!, [...ISTIO_INIT_ARGS, '--run-validation']);
    expect(r.exitCode).toBe(2);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPTURE_CASES, CNI_CASES } from '../conformance/sidecar-cases.js';
import { AMBIENT_CASES, AMBIENT_TPROXY_CASES } from '../conformance/ambient-cases.js';
import { runCli } from '../helpers/cli.js';
import { meshcapIn, saveOf } from '../helpers/meshcap.js';
import { createNetns, deleteNetns, requireRoot, saveTables, splitDryRunFamilies, withNetns, type Netns } from '../helpers/netns.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';

requireRoot();

const BACKENDS = ['nft', 'legacy'] as const;

describe('dry-run is the truth: the save-format dry-run equals iptables-save after the real apply', () => {
  const cases = [
    ...CAPTURE_CASES,
    ...CNI_CASES.map((c) => ({ ...c, golden: `cni-plugin/${c.golden}` })),
    ...AMBIENT_CASES.map((c) => ({ ...c, golden: `ambient/${c.golden}` })),
    ...AMBIENT_TPROXY_CASES.map((c) => ({ ...c, golden: `ambient/${c.golden}` })),
  ].filter((c) => c.appliable !== false);

  for (const backend of BACKENDS) {
    it.each(cases)(`${backend}: $golden`, async (c) => {
      const args = c.argv.filter((a) => a !== '-n');
      const dry = await runCli([...c.argv], c.env ?? {});
      expect(dry.code).toBe(0);
      const expected = splitDryRunFamilies(dry.stdout);
      await withNetns(async (ns) => {
        await ns.run('ip', ['link', 'set', 'lo', 'up']);
        const applied = await meshcapIn(ns, [...args, '--force-iptables-binary', backend], c.env ?? {});
        expect(applied.stderr).not.toContain('"level":50');
        expect(applied.exitCode).toBe(0);
        // Table order differs between backends (legacy: registration order), so compare table by table.
        expect(saveTables(await saveOf(ns, 'ipv4', backend))).toEqual(saveTables(expected.ipv4));
        if (expected.ipv6 !== '') expect(saveTables(await saveOf(ns, 'ipv6', backend))).toEqual(saveTables(expected.ipv6));
      });
    });
  }
});

describe("istio-init's rules in save format are accepted by iptables-restore --test", () => {
  let ns: Netns | undefined;
  beforeAll(async () => {
    ns = await createNetns();
  });
  afterAll(async () => {
    await deleteNetns(ns);
  });

  it.each([['off'], ['on']])('with --ipv6 %s', async (ipv6) => {
    const res = await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', ipv6]);
    expect(res.code).toBe(0);
    const { ipv4, ipv6: v6 } = splitDryRunFamilies(res.stdout);
    expect(ipv4).toContain('-A ISTIO_OUTPUT -j ISTIO_REDIRECT');
    const v4 = await ns!.tryRun('iptables-restore', ['--test'], { input: `${ipv4}\n` });
    expect(v4.stderr).toBe('');
    expect(v4.exitCode).toBe(0);
    if (ipv6 === 'on') {
      expect(v6).toContain('-A ISTIO_OUTPUT -s ::6/128 -o lo -j RETURN');
      const r6 = await ns!.tryRun('ip6tables-restore', ['--test'], { input: `${v6}\n` });
      expect(r6.stderr).toBe('');
      expect(r6.exitCode).toBe(0);
    } else {
      expect(v6).toBe('');
    }
  });

  it('rejects a broken rule, so the check above can fail', async () => {
    const bad = await ns!.tryRun('iptables-restore', ['--test'], { input: '*nat\n-A OUTPUT -p tcp -m tcp --dport 99999 -j RETURN\nCOMMIT\n' });
    expect(bad.exitCode).not.toBe(0);
  });
});

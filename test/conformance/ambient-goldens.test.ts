import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_DIR } from '../helpers/paths.js';
import { runCli } from '../helpers/cli.js';
import { AMBIENT_CASES, AMBIENT_TPROXY_CASES } from './ambient-cases.js';

const DIR = join(CONFORMANCE_DIR, 'ambient');
const golden = (name: string) => readFileSync(join(DIR, `${name}.golden`), 'utf8').trim();

describe('Istio ambient goldens (REDIRECT layout and host probe SNAT)', () => {
  it('covers every top-level ambient golden', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.golden')).map((f) => f.replace(/\.golden$/, ''));
    expect(AMBIENT_CASES.map((c) => c.golden).sort()).toEqual(files.sort());
  });

  it.each(AMBIENT_CASES)('reproduces $golden byte for byte', async (c) => {
    const res = await runCli([...c.argv, '--dry-run-format', 'istio']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe(golden(c.golden));
  });
});

describe("Istio 1.24 ambient goldens (TPROXY layout, meshcap's default)", () => {
  it('covers both legacy goldens', () => {
    const files = readdirSync(join(DIR, 'legacy-tproxy-1.24')).map((f) => `legacy-tproxy-1.24/${f.replace(/\.golden$/, '')}`);
    expect(AMBIENT_TPROXY_CASES.map((c) => c.golden).sort()).toEqual(files.sort());
  });

  it.each(AMBIENT_TPROXY_CASES)('reproduces the restore blocks of $golden', async (c) => {
    const res = await runCli([...c.argv, '--dry-run-format', 'istio']);
    expect(res.code).toBe(0);
    const restore = res.stdout.trim().split('\n').filter((l) => l !== 'iptables-save' && l !== 'ip6tables-save').join('\n');
    expect(restore).toBe(golden(c.golden));
  });

  it('is the default layout', async () => {
    const explicit = await runCli(['ambient', '-n', '--inbound', 'tproxy', '--ipv6', 'off']);
    const dflt = await runCli(['ambient', '-n', '--ipv6', 'off']);
    expect(dflt.stdout).toBe(explicit.stdout);
    expect(dflt.stdout).toContain('-j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x111/0xfff');
  });
});

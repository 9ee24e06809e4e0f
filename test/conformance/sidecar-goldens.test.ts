import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_DIR } from '../helpers/paths.js';
import { runCli } from '../helpers/cli.js';
import { CAPTURE_CASES, CNI_CASES } from './sidecar-cases.js';

const DIR = join(CONFORMANCE_DIR, 'sidecar');
const golden = (path: string) => readFileSync(join(DIR, path), 'utf8').trim();

/** Splits restore text into blocks keyed by table, as upstream's CNI test compares them. */
function blocksByTable(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const block of text.split('COMMIT').map((b) => b.trim()).filter(Boolean)) {
    out.set(block.split('\n')[0] ?? '', `${block}\nCOMMIT`);
  }
  return out;
}

describe('Istio sidecar capture goldens', () => {
  it('covers every capture golden kept in the repo', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.golden')).map((f) => f.replace(/\.golden$/, ''));
    expect(CAPTURE_CASES.map((c) => c.golden).sort()).toEqual(files.sort());
  });

  it.each(CAPTURE_CASES)('reproduces $golden byte for byte', async (c) => {
    const res = await runCli([...c.argv, '--dry-run-format', 'istio'], c.env ?? {});
    expect(res.stderr).not.toMatch(/"level":5/);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe(golden(`${c.golden}.golden`));
  });
});

describe('Istio CNI-plugin sidecar goldens', () => {
  it('covers every CNI golden kept in the repo', () => {
    const files = readdirSync(join(DIR, 'cni-plugin')).map((f) => f.replace(/\.txt\.golden$/, ''));
    expect(CNI_CASES.map((c) => c.golden).sort()).toEqual(files.sort());
  });

  it.each(CNI_CASES)('reproduces the restore blocks of $golden', async (c) => {
    const res = await runCli([...c.argv, '--dry-run-format', 'istio']);
    expect(res.code).toBe(0);
    // The dry-run framing holds the v4 restore text between the two save probes and the final dump.
    const restore = res.stdout.trim().split('\n').slice(2, -1).join('\n');
    const expected = blocksByTable(golden(`cni-plugin/${c.golden}.txt.golden`));
    expect(blocksByTable(restore)).toEqual(expected);
    expect(restore).toBe(golden(`cni-plugin/${c.golden}.txt.golden`));
  });
});

describe("Istio's --cleanup-only dry-run", () => {
  it('prints the command list CASES.md §6 derives for the empty config', async () => {
    const cases = readFileSync(join(DIR, 'CASES.md'), 'utf8');
    const section = cases.slice(cases.indexOf('## 6.'));
    const expected = /```\n([\s\S]*?)```/.exec(section)?.[1]?.trim();
    expect(expected).toMatch(/^iptables-save\nip6tables-save\niptables -t nat -D ISTIO_OUTPUT/);
    const res = await runCli(['-n', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '--ipv6', 'off', '--cleanup-only', '--dry-run-format', 'istio']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe(expected);
  });
});

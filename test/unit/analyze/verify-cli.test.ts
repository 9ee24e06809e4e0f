import { describe, expect, it } from 'vitest';
import type { RunResult, Runner } from '../../../src/exec/runner.js';
import { renderSaveFamily } from '../../../src/render/save.js';
import { fakeHost, runCli } from '../../helpers/cli.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

const ARGS = [...ISTIO_INIT_ARGS, '--ipv6', 'off'];
const applied = `${renderSaveFamily(planFor(ARGS), 'ipv4').join('\n')}\n`;

/** A namespace whose nft backend holds `save` (and `nft -j list ruleset` shows `nftTables`); every write is refused, and recorded. */
function namespaceHolding(save: string, nftTables: string[] = []): Runner & { writes: string[] } {
  const writes: string[] = [];
  const ruleset = JSON.stringify({ nftables: [{ metainfo: { json_schema_version: 1 } }, ...nftTables.map((name) => ({ table: { family: 'inet', name, handle: 1 } }))] });
  return {
    writes,
    run: async (cmd, args): Promise<RunResult> => {
      if (cmd === 'iptables-nft-save') return { exitCode: 0, stdout: save, stderr: '' };
      if (cmd === 'iptables-legacy-save') return { exitCode: 0, stdout: '', stderr: '' };
      if (cmd === 'nft' && args.join(' ') === '-j list ruleset') return { exitCode: 0, stdout: ruleset, stderr: '' };
      writes.push([cmd, ...args].join(' '));
      return { exitCode: 1, stdout: '', stderr: 'verify must not write' };
    },
  };
}

describe('--verify through the CLI', () => {
  it('exits 0 with nothing on stdout when the namespace holds exactly the config, and writes nothing', async () => {
    const runner = namespaceHolding(applied);
    const r = await runCli([...ARGS, '--verify'], {}, fakeHost(), runner);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(runner.writes).toEqual([]);
  });

  it("names the mode's native nftables tables found next to the iptables rules, and only those", async () => {
    const runner = namespaceHolding(applied, ['istio-proxy-nat', 'istio-ambient-nat', 'foreign']);
    const r = await runCli([...ARGS, '--verify'], {}, fakeHost(), runner);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('unexpected table: inet istio-proxy-nat (native nftables, next to the iptables rules)\n');
    expect(runner.writes).toEqual([]);
  });

  it('exits 1 and prints one line per difference', async () => {
    const runner = namespaceHolding(applied.replace('-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN\n', ''));
    const r = await runCli([...ARGS, '--verify'], {}, fakeHost(), runner);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('missing: -A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN (nat, ipv4)\n');
    expect(r.stderr).not.toContain('internal error');
  });

  it.each([
    [['--json'], '--json'],
    [['--verify', '-n'], '--verify'],
    [['--verify', '--cleanup-only'], '--verify'],
  ])('exits 2 for %j naming %s', async (extra, flag) => {
    const r = await runCli([...ARGS, ...extra]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`invalid ${flag}`);
    expect(r.commands).toEqual([]);
  });
});

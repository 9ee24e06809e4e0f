import { describe, expect, it } from 'vitest';
import { NOT_FOUND, type Runner } from '../../../src/exec/runner.js';
import { runCli } from '../../helpers/cli.js';

/** The nft executor against recording runners: what it starts, and how a failing nft is reported. */
/** `fresh`: the runner's probe (netlink, in production) sees no nf_tables tables; otherwise it has no probe. */
function runnerAnswering(exitCode: number, stderr = '', ruleset = '', fresh = false): Runner & { calls: string[]; inputs: string[] } {
  const calls: string[] = [];
  const inputs: string[] = [];
  return {
    calls,
    inputs,
    ...(fresh ? { probe: async () => ({ nftTables: [], legacyTables: { ipv4: '', ipv6: '' } }) } : {}),
    async run(cmd, args, opts) {
      calls.push([cmd, ...args].join(' '));
      inputs.push(opts?.input ?? '');
      if (cmd === 'nft' && args[0] === 'list') return { exitCode: 0, stdout: ruleset, stderr: '' };
      return { exitCode: cmd === 'nft' ? exitCode : 0, stdout: '', stderr: cmd === 'nft' ? stderr : '' };
    },
  };
}

const REDIRECT = ['--native-nftables', '-p', '15001', '-z', '15006', '-u', '1337', '-b', '*', '-i', '*', '--ipv6', 'off'];

describe('applying native nftables', () => {
  it('starts exactly one nft process in a fresh pod (the probe sees none of our tables), deleting nothing', async () => {
    const runner = runnerAnswering(0, '', '', true);
    const res = await runCli(REDIRECT, {}, undefined, runner);
    expect(res.code).toBe(0);
    expect(runner.calls).toEqual(['nft -f -']);
    const input = runner.inputs[0] ?? '';
    expect(input).not.toContain('delete table');
    expect(input.startsWith('add table inet istio-proxy-nat\n')).toBe(true);
    expect(input).toMatch(/\nlist chains\n$/);
  });

  it('without a probe reads our tables first, and deletes exactly those it found before re-creating', async () => {
    const runner = runnerAnswering(0, '', 'table inet istio-proxy-mangle {\n\tchain prerouting {\n\t}\n}\n');
    expect((await runCli(REDIRECT, {}, undefined, runner)).code).toBe(0);
    expect(runner.calls).toEqual(['nft list ruleset', 'nft -f -']);
    expect((runner.inputs[1] ?? '').split('\n').filter((l) => l.startsWith('delete table'))).toEqual(['delete table inet istio-proxy-mangle']);
  });

  it('writes nothing when our tables already hold exactly this config (counters and all are kept)', async () => {
    const listing = (await runCli(['-n', ...REDIRECT])).stdout.replace(/counter/g, 'counter packets 7 bytes 420');
    const runner = runnerAnswering(0, '', listing);
    const res = await runCli(REDIRECT, {}, undefined, runner);
    expect(res.code).toBe(0);
    expect(runner.calls).toEqual(['nft list ruleset']);
    expect(res.stderr).toContain('"action":"unchanged"');
  });

  it('rewrites our tables in one transaction when one rule differs', async () => {
    const listing = (await runCli(['-n', ...REDIRECT])).stdout.replace('redirect to :15001', 'redirect to :15002');
    const runner = runnerAnswering(0, '', listing);
    expect((await runCli(REDIRECT, {}, undefined, runner)).code).toBe(0);
    expect(runner.calls).toEqual(['nft list ruleset', 'nft -f -']);
  });

  it('says to install nftables when nft is missing (exit 4)', async () => {
    const res = await runCli(REDIRECT, {}, undefined, runnerAnswering(NOT_FOUND, 'nft: command not found'));
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(/nft -f - failed \(exit 127\).*install nftables/);
  });

  it("reports nft's own error and that nothing was changed when the kernel rejects the transaction", async () => {
    const res = await runCli(REDIRECT, {}, undefined, runnerAnswering(1, '/dev/stdin:12:1-20: Error: Could not process rule: No such file or directory'));
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(/Could not process rule.*nothing was changed/);
  });

  const AMBIENT = ['ambient', '--native-nftables', '--redirect-dns=false', '--ipv6', 'off'];
  const transactionOf = (runner: { calls: string[]; inputs: string[] }) => runner.inputs[runner.calls.indexOf('nft -f -')] ?? '';

  it('deletes nothing when the read before a routed apply finds none of our tables', async () => {
    const runner = runnerAnswering(0, '', 'table inet foreign {\n\tchain c {\n\t}\n}\n');
    expect((await runCli(AMBIENT, {}, undefined, runner)).code).toBe(0);
    expect(runner.calls.slice(0, 2)).toEqual(['nft list ruleset', 'nft -f -']);
    expect(transactionOf(runner)).not.toContain('delete table');
  });

  it('deletes exactly the tables of ours the read found, so a table the config no longer needs goes', async () => {
    const runner = runnerAnswering(0, '', 'table inet istio-ambient-raw {\n\tchain output {\n\t}\n}\n');
    expect((await runCli(AMBIENT, {}, undefined, runner)).code).toBe(0);
    const deletes = transactionOf(runner).split('\n').filter((l) => l.startsWith('delete table'));
    expect(deletes).toEqual(['delete table inet istio-ambient-raw']);
  });
});

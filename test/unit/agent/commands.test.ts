import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAgentCommand } from '../../../src/agent/run.js';
import { readInstalledEntry } from '../../../src/node/install/installed-entry.js';
import { fakeHost } from '../../helpers/cli.js';

/** The agent door's flags and its one-shot answers on real temp dirs (no runtime needed: they stop before the CRI). */

let root = '';
let conf = '';
let bin = '';
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'meshcap-agent-'));
  conf = join(root, 'net.d');
  bin = join(root, 'bin');
  mkdirSync(conf);
  mkdirSync(bin);
  writeFileSync(join(root, 'plugin'), '#!/bin/sh\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runAgentCommand(argv, { host: fakeHost(), stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
  return { code, stdout, stderr };
}

const agent = (...extra: string[]) => run(['node-agent', '--cni-conf-dir', conf, '--cni-bin-dir', bin, '--plugin-binary', join(root, 'plugin'), ...extra]);

describe('meshcap node-agent flags', () => {
  it.each([
    [['--sweep-interval', 'soon'], '--sweep-interval="soon"'],
    [['--sweep-interval', '0'], '--sweep-interval="0"'],
    [['--repair', 'maybe'], '--repair="maybe"'],
    [['--metrics-address', '15014'], '--metrics-address="15014"'],
    [['--cri-socket', 'run/containerd.sock'], '--cri-socket="run/containerd.sock"'],
    [['--plugin-config', '{"mode":"mesh"}'], '--plugin-config field mode'],
    [['--frobnicate'], "unknown option '--frobnicate'"],
  ])('refuses %j with exit 2 and one line naming it', async (extra, named) => {
    const r = await agent(...extra);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(named);
  });

  it('--once installs the entry like install-cni, --check answers 0, --uninstall takes it out again', async () => {
    writeFileSync(join(conf, '10-bridge.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'bridge' }] }));
    expect((await agent('--check')).code).toBe(5);
    expect((await agent('--once')).code).toBe(0);
    expect((await agent('--check')).code).toBe(0);
    const entry = readInstalledEntry(conf);
    expect('conf' in entry && entry.conf.mode).toBe('sidecar');
    expect((await agent('--uninstall')).code).toBe(0);
    expect(readInstalledEntry(conf)).toEqual({ why: `no meshcap-cni entry in ${join(conf, '10-bridge.conflist')}` });
  });
});

describe('meshcap node-status flags and environment', () => {
  it('exits 5 naming the dir when the node has no meshcap-cni entry', async () => {
    writeFileSync(join(conf, '10-bridge.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'bridge' }] }));
    const r = await run(['node-status', '--cni-conf-dir', conf, '--cri-socket', join(root, 'cri.sock')]);
    expect(r).toMatchObject({ code: 5, stdout: '' });
    expect(r.stderr).toContain('no meshcap-cni entry in');
  });

  it('exits 5 naming the socket when there is no CRI socket', async () => {
    writeFileSync(join(conf, '10-bridge.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'bridge' }, { type: 'meshcap-cni' }] }));
    const r = await run(['node-status', '--cni-conf-dir', conf, '--cri-socket', join(root, 'cri.sock')]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain(`no CRI socket at ${join(root, 'cri.sock')} (--cri-socket)`);
  });

  it('exits 2 on a bad flag', async () => {
    const r = await run(['node-status', '--table']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--table'");
  });

  it('reads an entry that does not parse as such, naming the field', () => {
    writeFileSync(join(conf, '10-bridge.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'bridge' }, { type: 'meshcap-cni', mode: 'mesh' }] }));
    expect(readInstalledEntry(conf)).toEqual({ why: expect.stringContaining('does not parse: mode') });
  });
});

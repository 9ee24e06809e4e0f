import { execa } from 'execa';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PrivateContainerd } from '../helpers/cri/containerd.js';
import { iptablesSaveIn } from '../helpers/cri/traffic.js';
import { requireRoot } from '../helpers/netns.js';
import { entryCommand, IMPL } from '../helpers/paths.js';

requireRoot();

/**
 * `meshcap install-cni` as a process (the Node build, or with MESHCAP_IMPL=bin the executable, which installs
 * itself): watch-and-repair and removal on SIGTERM/SIGINT on real directories, and a containerd whose
 * conflist the installer made from a plain bridge `.conf`.
 */

const meshcap = entryCommand('meshcap');
/** Under the Node build the plugin to install is a script running dist/meshcap-cni.cjs; the executable installs itself. */
function pluginBinaryArgs(dir: string): string[] {
  if (IMPL === 'bin') return [];
  const { file, args } = entryCommand('meshcap-cni');
  const script = join(dir, 'meshcap-cni-node');
  writeFileSync(script, `#!/bin/sh\nexec ${[file, ...args].join(' ')} "$@"\n`, { mode: 0o755 });
  return ['--plugin-binary', script];
}

const BRIDGE_CONF = (net: string, bridge: string, subnet: string, dataDir: string) => ({
  cniVersion: '0.4.0',
  name: net,
  type: 'bridge',
  bridge,
  isGateway: false,
  ipMasq: false,
  ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir },
});

const waitFor = async (what: string, cond: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe(`meshcap install-cni (${IMPL}) as a long-running process`, () => {
  let root = '';
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it.each(['SIGTERM', 'SIGINT'] as const)('repairs the entry when the primary rewrites its file, and on %s removes it and the binary and exits 0', async (signal) => {
    root = mkdtempSync(join(tmpdir(), 'meshcap-icp-'));
    const conf = join(root, 'net.d');
    const bin = join(root, 'bin');
    mkdirSync(conf);
    mkdirSync(bin);
    const primary = join(conf, '10-flannel.conflist');
    const original = `${JSON.stringify({ name: 'cbr0', cniVersion: '0.3.1', plugins: [{ type: 'flannel', delegate: { hairpinMode: true, isDefaultGateway: true } }, { type: 'portmap', capabilities: { portMappings: true } }] }, null, 2)}\n`;
    writeFileSync(primary, original);
    const proc = execa(meshcap.file, [...meshcap.args, 'install-cni', '--cni-conf-dir', conf, '--cni-bin-dir', bin, '--recheck-interval', '1', ...pluginBinaryArgs(root)], { reject: false });
    const inPlace = () => readFileSync(primary, 'utf8').includes('"meshcap-cni"') && existsSync(join(bin, 'meshcap-cni'));
    try {
      await waitFor('the install', inPlace);
      expect((await execa(meshcap.file, [...meshcap.args, 'install-cni', '--cni-conf-dir', conf, '--cni-bin-dir', bin, '--check'], { reject: false })).exitCode).toBe(0);
      writeFileSync(primary, original);
      await waitFor('the repair', inPlace);
    } finally {
      proc.kill(signal);
    }
    const r = await proc;
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('"msg":"repaired"');
    expect(readFileSync(primary, 'utf8')).toBe(original);
    expect(existsSync(join(bin, 'meshcap-cni'))).toBe(false);
  });
});

describe(`meshcap install-cni (${IMPL}) during an upgrade (DaemonSet maxSurge: new pod first, old one stopped after)`, () => {
  let root = '';
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('lets the newer installer take over: the old one stands by, and its SIGTERM leaves the new entry and binary in place', async () => {
    root = mkdtempSync(join(tmpdir(), 'meshcap-icu-'));
    const conf = join(root, 'net.d');
    const bin = join(root, 'bin');
    mkdirSync(conf);
    mkdirSync(bin);
    const primary = join(conf, '10-bridge.conflist');
    writeFileSync(primary, JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'bridge' }] }));
    const start = (cfg: object) => execa(meshcap.file, [...meshcap.args, 'install-cni', '--cni-conf-dir', conf, '--cni-bin-dir', bin, '--recheck-interval', '0.5', '--plugin-config', JSON.stringify(cfg), ...pluginBinaryArgs(root)], { reject: false });
    const lastEntry = () => (JSON.parse(readFileSync(primary, 'utf8')) as { plugins: Record<string, unknown>[] }).plugins.at(-1);
    const oldOne = start({ log_level: 'info' });
    let newOne: ReturnType<typeof start> | undefined;
    try {
      await waitFor('the old entry', () => lastEntry()?.['log_level'] === 'info');
      newOne = start({ log_level: 'debug' });
      await waitFor('the new entry', () => lastEntry()?.['log_level'] === 'debug');
      // The old installer must not fight the new one over the entry.
      await new Promise((r) => setTimeout(r, 1500));
      expect(lastEntry()?.['log_level']).toBe('debug');
    } finally {
      oldOne.kill('SIGTERM');
    }
    const old = await oldOne;
    expect(old.exitCode).toBe(0);
    expect(old.stderr).toContain('handed over to a newer installer');
    expect(lastEntry()).toMatchObject({ type: 'meshcap-cni', log_level: 'debug' });
    expect(existsSync(join(bin, 'meshcap-cni'))).toBe(true);
    newOne?.kill('SIGTERM');
    expect((await newOne)?.exitCode).toBe(0);
    expect(lastEntry()).toEqual({ type: 'bridge' });
    expect(existsSync(join(bin, 'meshcap-cni'))).toBe(false);
  });
});

describe(`containerd with a conflist made by meshcap install-cni (${IMPL}) from a plain bridge .conf`, () => {
  let lab: PrivateContainerd | undefined;
  const L = () => lab as PrivateContainerd;
  const INJECTED = { 'sidecar.istio.io/status': JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };

  beforeAll(async () => {
    lab = new PrivateContainerd('192.0.2.0/24');
    writeFileSync(join(L().confDir, `10-${L().network}.conf`), JSON.stringify(BRIDGE_CONF(L().network, L().bridge, L().subnet, join(L().dir, 'ipam'))));
    const cfg = JSON.stringify({ mode: 'sidecar', ipv6: 'off', log_file: L().pluginLog });
    const r = await execa(meshcap.file, [...meshcap.args, 'install-cni', '--once', '--cni-conf-dir', L().confDir, '--cni-bin-dir', L().binDir, '--plugin-config', cfg, ...pluginBinaryArgs(L().dir)], { reject: false });
    if (r.exitCode !== 0) throw new Error(`install-cni failed: ${r.stderr}`);
    await L().start();
  }, 90_000);

  afterAll(async () => {
    await lab?.destroy();
    expect(await lab?.residue()).toEqual([]);
  }, 90_000);

  it('loads the converted list, captures an injected pod and passes a plain one through', async () => {
    const list = JSON.parse(readFileSync(join(L().confDir, `10-${L().network}.conflist`), 'utf8')) as { cniVersion: string; plugins: { type: string }[] };
    expect(existsSync(join(L().confDir, `10-${L().network}.conf`))).toBe(false);
    expect(list.cniVersion).toBe('0.4.0');
    expect(list.plugins.map((p) => p.type)).toEqual(['bridge', 'meshcap-cni']);
    const injected = await L().runPod('web', 'default', INJECTED);
    const plain = await L().runPod('plain', 'default', {});
    expect(await iptablesSaveIn((await L().cri.podSandboxStatus(injected)).netns)).toContain('-A ISTIO_OUTPUT -j ISTIO_REDIRECT');
    expect(await iptablesSaveIn((await L().cri.podSandboxStatus(plain)).netns)).not.toContain('ISTIO_');
    await L().removePod(injected);
    await L().removePod(plain);
    expect(await L().leftovers()).toEqual({ netnsMounts: 0, veths: 0, leases: 0, lockFiles: 0, sandboxes: 0 });
  });
});

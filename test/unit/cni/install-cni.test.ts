import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runInstallCni } from '../../../src/cli/install-cni.js';
import { fakeHost } from '../../helpers/cli.js';

/** The installer on real temp directories (a conf dir and a bin dir), called in-process. */

let root = '';
let conf = '';
let bin = '';
let plugin = '';

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'meshcap-install-'));
  conf = join(root, 'net.d');
  bin = join(root, 'bin');
  mkdirSync(conf);
  mkdirSync(bin);
  plugin = join(root, 'meshcap-cni-build');
  writeFileSync(plugin, '#!/bin/sh\necho plugin v1\n');
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const CALICO = {
  name: 'k8s-pod-network',
  cniVersion: '0.3.1',
  plugins: [
    { type: 'calico', log_level: 'info', datastore_type: 'kubernetes', ipam: { type: 'calico-ipam' }, policy: { type: 'k8s' }, kubernetes: { kubeconfig: '/etc/cni/net.d/calico-kubeconfig' } },
    { type: 'portmap', snat: true, capabilities: { portMappings: true } },
  ],
};
const CAP = { 'io.kubernetes.cri.pod-annotations': true };

async function install(args: string[], signal?: AbortSignal) {
  let stderr = '';
  let stdout = '';
  const code = await runInstallCni(['--cni-conf-dir', conf, '--cni-bin-dir', bin, ...args], {
    host: fakeHost(),
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    selfExecutable: undefined,
    ...(signal ? { signal } : {}),
  });
  return { code, stderr, stdout };
}

const write = (name: string, json: unknown, mode = 0o644) => {
  writeFileSync(join(conf, name), typeof json === 'string' ? json : JSON.stringify(json, null, 4));
  chmodSync(join(conf, name), mode);
};
const read = (name: string) => JSON.parse(readFileSync(join(conf, name), 'utf8')) as { plugins: Record<string, unknown>[] } & Record<string, unknown>;
const files = () => readdirSync(conf).sort();

describe('meshcap install-cni --once', () => {
  it('puts our entry last in the primary list with the pod-annotations capability, keeping every other plugin, key and the mode', async () => {
    write('10-calico.conflist', CALICO, 0o600);
    const r = await install(['--once', '--plugin-binary', plugin, '--plugin-config', '{"mode":"sidecar","exclude_namespaces":["kube-system","istio-system"]}']);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(read('10-calico.conflist')).toEqual({ ...CALICO, plugins: [...CALICO.plugins, { type: 'meshcap-cni', mode: 'sidecar', exclude_namespaces: ['kube-system', 'istio-system'], capabilities: CAP }] });
    expect(Object.keys(read('10-calico.conflist'))).toEqual(['name', 'cniVersion', 'plugins']);
    expect(statSync(join(conf, '10-calico.conflist')).mode & 0o777).toBe(0o600);
    expect(files()).toEqual(['10-calico.conflist']);
  });

  it('leaves the file byte-identical (and untouched) on a second run with the same input', async () => {
    write('10-calico.conflist', CALICO);
    await install(['--once', '--plugin-binary', plugin]);
    const first = readFileSync(join(conf, '10-calico.conflist'));
    const before = statSync(join(conf, '10-calico.conflist'));
    await new Promise((r) => setTimeout(r, 20));
    expect((await install(['--once', '--plugin-binary', plugin])).code).toBe(0);
    expect(readFileSync(join(conf, '10-calico.conflist')).equals(first)).toBe(true);
    expect(statSync(join(conf, '10-calico.conflist')).ino).toBe(before.ino);
  });

  it('replaces an earlier meshcap-cni entry instead of adding a second one', async () => {
    write('10-calico.conflist', { ...CALICO, plugins: [CALICO.plugins[0], { type: 'meshcap-cni', mode: 'ambient' }, CALICO.plugins[1]] });
    await install(['--once', '--plugin-binary', plugin]);
    const plugins = read('10-calico.conflist').plugins;
    expect(plugins.map((p) => p['type'])).toEqual(['calico', 'portmap', 'meshcap-cni']);
    expect(plugins[2]).toEqual({ type: 'meshcap-cni', capabilities: CAP });
  });

  it('turns a .conf into a .conflist with the .conf\'s own cniVersion and name, then removes the .conf', async () => {
    const bridge = { cniVersion: '0.4.0', name: 'mynet', type: 'bridge', bridge: 'cni0', ipam: { type: 'host-local', subnet: '198.51.100.0/24' } };
    write('10-bridge.conf', bridge, 0o640);
    expect((await install(['--once', '--plugin-binary', plugin])).code).toBe(0);
    expect(files()).toEqual(['10-bridge.conflist']);
    const { cniVersion: _v, name: _n, ...plugin0 } = bridge;
    expect(read('10-bridge.conflist')).toEqual({ cniVersion: '0.4.0', name: 'mynet', plugins: [plugin0, { type: 'meshcap-cni', capabilities: CAP }] });
    expect(statSync(join(conf, '10-bridge.conflist')).mode & 0o777).toBe(0o640);
  });

  it('picks the primary as containerd does: by name, skipping files that do not parse', async () => {
    write('00-broken.conflist', '{"plugins": [');
    write('01-empty.conflist', { name: 'x', plugins: [] });
    write('02-notype.conf', { name: 'y' });
    write('05-notes.txt', 'not a config');
    write('10-calico.conflist', CALICO);
    write('20-other.conflist', CALICO);
    await install(['--once', '--plugin-binary', plugin]);
    expect(read('10-calico.conflist').plugins.at(-1)).toMatchObject({ type: 'meshcap-cni' });
    expect(read('20-other.conflist')).toEqual(CALICO);
    expect(readFileSync(join(conf, '00-broken.conflist'), 'utf8')).toBe('{"plugins": [');
  });

  it('reads .json files too, and --conf-name overrides the choice', async () => {
    write('05-first.json', { cniVersion: '1.0.0', name: 'j', type: 'ptp' });
    write('10-calico.conflist', CALICO);
    await install(['--once', '--plugin-binary', plugin, '--conf-name', '10-calico.conflist']);
    expect(read('10-calico.conflist').plugins.at(-1)).toMatchObject({ type: 'meshcap-cni' });
    expect(files()).toContain('05-first.json');
    await install(['--once', '--plugin-binary', plugin]);
    expect(files()).toEqual(['05-first.conflist', '10-calico.conflist']);
  });

  it('copies the plugin binary with mode 0755, and not again when it is identical', async () => {
    write('10-calico.conflist', CALICO);
    await install(['--once', '--plugin-binary', plugin]);
    const target = join(bin, 'meshcap-cni');
    expect(readFileSync(target, 'utf8')).toBe('#!/bin/sh\necho plugin v1\n');
    expect(statSync(target).mode & 0o777).toBe(0o755);
    const ino = statSync(target).ino;
    await install(['--once', '--plugin-binary', plugin]);
    expect(statSync(target).ino).toBe(ino);
    writeFileSync(plugin, '#!/bin/sh\necho plugin v2\n');
    await install(['--once', '--plugin-binary', plugin]);
    expect(readFileSync(target, 'utf8')).toContain('v2');
    expect(readdirSync(bin)).toEqual(['meshcap-cni']);
  });

  it('exits 5 naming the directory when there is no primary config', async () => {
    write('00-broken.conflist', '{');
    const r = await install(['--once', '--plugin-binary', plugin]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain(`no primary CNI config in ${conf}`);
  });

  it('needs --plugin-binary under the Node build (exit 2)', async () => {
    write('10-calico.conflist', CALICO);
    const r = await install(['--once']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--plugin-binary');
    expect(read('10-calico.conflist')).toEqual(CALICO);
  });

  it.each([
    ['an unknown field', '{"mode":"sidecar","proxy_uuid":1}', '--plugin-config field proxy_uuid'],
    ['a bad mode', '{"mode":"mesh"}', '--plugin-config field mode'],
    ['a port out of range', '{"exclude_outbound_ports":"15020,70000"}', '--plugin-config field exclude_outbound_ports'],
    ['a key the runtime sets', '{"cniVersion":"1.0.0"}', '--plugin-config field cniVersion'],
    ['another plugin type', '{"type":"istio-cni"}', '--plugin-config field type'],
    ['a relative log file', '{"log_file":"meshcap.log"}', '--plugin-config field log_file'],
    ['text that is not JSON', '{mode: sidecar}', 'not JSON'],
    ['a bypass policy naming an annotation that does not narrow capture', '{"bypass_policy":{"deny":["sidecar.istio.io/inject"]}}', '--plugin-config field bypass_policy.deny.0'],
    ['a bypass policy with deny as a string', '{"bypass_policy":{"deny":"*"}}', '--plugin-config field bypass_policy.deny'],
    ['a bypass policy with an unknown field', '{"bypass_policy":{"deny":["*"],"allow":["apps"]}}', '--plugin-config field bypass_policy'],
    ['a bypass policy allowing a namespace that cannot exist', '{"bypass_policy":{"deny":["*"],"allow_namespaces":["Apps"]}}', '--plugin-config field bypass_policy.allow_namespaces.0'],
  ])('refuses %s in --plugin-config with exit 2 naming it, and writes nothing', async (_name, cfg, named) => {
    write('10-calico.conflist', CALICO);
    const before = readFileSync(join(conf, '10-calico.conflist'));
    const r = await install(['--once', '--plugin-binary', plugin, '--plugin-config', cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(named);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(readFileSync(join(conf, '10-calico.conflist')).equals(before)).toBe(true);
    expect(readdirSync(bin)).toEqual([]);
  });

  it('writes a good bypass_policy into the entry as given', async () => {
    write('10-calico.conflist', CALICO);
    const policy = { deny: ['traffic.sidecar.istio.io/excludeOutboundIPRanges'], allow_namespaces: ['istio-system'] };
    expect((await install(['--once', '--plugin-binary', plugin, '--plugin-config', JSON.stringify({ bypass_policy: policy })])).code).toBe(0);
    expect(read('10-calico.conflist').plugins.at(-1)).toEqual({ type: 'meshcap-cni', bypass_policy: policy, capabilities: CAP });
  });

  it('reads --plugin-config from @file', async () => {
    write('10-calico.conflist', CALICO);
    writeFileSync(join(root, 'plugin.json'), '{"mode":"ambient","inbound":"redirect"}');
    expect((await install(['--once', '--plugin-binary', plugin, '--plugin-config', `@${join(root, 'plugin.json')}`])).code).toBe(0);
    expect(read('10-calico.conflist').plugins.at(-1)).toEqual({ type: 'meshcap-cni', mode: 'ambient', inbound: 'redirect', capabilities: CAP });
  });
});

describe('meshcap install-cni --uninstall and --check', () => {
  it('removes only our entry (mode kept) and the binary; a second run changes nothing', async () => {
    write('10-calico.conflist', CALICO, 0o600);
    await install(['--once', '--plugin-binary', plugin]);
    expect((await install(['--check'])).code).toBe(0);
    expect((await install(['--uninstall'])).code).toBe(0);
    expect(read('10-calico.conflist')).toEqual(CALICO);
    expect(statSync(join(conf, '10-calico.conflist')).mode & 0o777).toBe(0o600);
    expect(existsSync(join(bin, 'meshcap-cni'))).toBe(false);
    const after = readFileSync(join(conf, '10-calico.conflist'));
    expect((await install(['--uninstall'])).code).toBe(0);
    expect(readFileSync(join(conf, '10-calico.conflist')).equals(after)).toBe(true);
    const check = await install(['--check']);
    expect(check.code).toBe(5);
    expect(check.stderr).toContain('not ready');
  });
});

const waitFor = async (what: string, cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};
const ourEntryLast = (name: string) => {
  try {
    return read(name).plugins.at(-1)?.['type'] === 'meshcap-cni';
  } catch {
    return false;
  }
};

describe('meshcap install-cni watching the conf dir', () => {
  it('waits for a primary, repairs a rewritten file, follows a file that sorts first, warns about a fight, and removes itself at the end', async () => {
    const stop = new AbortController();
    const run = install(['--plugin-binary', plugin, '--recheck-interval', '30'], stop.signal);
    try {
      await new Promise((r) => setTimeout(r, 200));
      write('10-calico.conflist', CALICO);
      await waitFor('the first install', () => ourEntryLast('10-calico.conflist'));
      // The primary CNI rewrites its file (calico-node restarting): the entry comes back.
      for (let i = 0; i < 7; i++) {
        write('10-calico.conflist', CALICO);
        await waitFor(`repair ${i}`, () => ourEntryLast('10-calico.conflist'));
      }
      // Another config starts to sort first: the entry moves into it.
      write('05-cilium.conflist', { cniVersion: '1.0.0', name: 'cilium', plugins: [{ type: 'cilium-cni' }] });
      await waitFor('the new primary', () => ourEntryLast('05-cilium.conflist'));
    } finally {
      stop.abort();
    }
    const r = await run;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('"msg":"waiting for a primary CNI config"');
    expect(r.stderr).toContain('"msg":"repaired"');
    expect(r.stderr).toContain('another writer keeps reverting the CNI config');
    expect(r.stderr).toContain('05-cilium.conflist now sorts first');
    expect(read('10-calico.conflist')).toEqual(CALICO);
    expect(read('05-cilium.conflist').plugins.map((p) => p['type'])).toEqual(['cilium-cni']);
    expect(existsSync(join(bin, 'meshcap-cni'))).toBe(false);
    expect(files().filter((f) => f.includes('meshcap-tmp'))).toEqual([]);
  });

  it('re-installs a deleted binary on the periodic re-check', async () => {
    write('10-calico.conflist', CALICO);
    const stop = new AbortController();
    const run = install(['--plugin-binary', plugin, '--recheck-interval', '0.2'], stop.signal);
    try {
      await waitFor('the binary', () => existsSync(join(bin, 'meshcap-cni')));
      rmSync(join(bin, 'meshcap-cni'));
      await waitFor('the binary again', () => existsSync(join(bin, 'meshcap-cni')));
    } finally {
      stop.abort();
    }
    expect((await run).code).toBe(0);
  });
});

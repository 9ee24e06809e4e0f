import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entryCommand, IMPL } from '../../helpers/paths.js';

/**
 * The plugin's front (cni/front.ts) as a process, in the build under test: VERSION, and an ADD that passes a
 * pod through under an entry an earlier ADD validated, answered before the handler is loaded — with the
 * same bytes on stdout and stderr as the full path (the memo off), and from the memo the full path left.
 */

const PREV = { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: '/run/netns/p' }], ips: [{ address: '198.51.100.7/24', interface: 0 }] };
const CONF = JSON.stringify({ cniVersion: '1.0.0', name: 'net', type: 'meshcap-cni', prevResult: PREV, ipv6: 'off' });
const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c0ffee', CNI_NETNS: '/run/netns/p', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin' };
const pod = (ns: string) => ({ ...ENV, CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${ns};K8S_POD_NAME=web` });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcfront-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function plugin(env: Record<string, string>, input: string, memo: string = dir) {
  const { file, args } = entryCommand('meshcap-cni');
  const r = await execa(file, args, { env: { ...env, MESHCAP_CNI_MEMO_DIR: memo }, extendEnv: false, input, reject: false });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr.replace(/"time":"[^"]+"/g, '"time":"T"') };
}

describe(`meshcap-cni's front through the ${IMPL} build`, () => {
  it('answers VERSION', async () => {
    const r = await plugin({ CNI_COMMAND: 'VERSION' }, '{"cniVersion":"0.4.0"}');
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ cniVersion: '0.4.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
  });

  it('a pass-through after the first: the same stdout and stderr as the full path, from the memo it left', async () => {
    const first = await plugin(pod('kube-system'), CONF);
    expect(first.exitCode).toBe(0);
    expect(readdirSync(dir)).toHaveLength(1);
    const again = await plugin(pod('kube-system'), CONF);
    const fullPath = await plugin(pod('kube-system'), CONF, 'off');
    expect(again).toEqual(first);
    expect(fullPath).toEqual(first);
    expect(first.stderr).toBe('{"level":30,"time":"T","command":"ADD","container":"c0ffee","reason":"namespace kube-system is excluded","msg":"pod passes through untouched"}');
    expect(JSON.parse(first.stdout)).toEqual(PREV);
  });

  it('the front decides from the memo (shown by one that says otherwise), and the full path from the entry', async () => {
    await plugin(pod('kube-system'), CONF);
    const [file] = readdirSync(dir);
    const path = join(dir, file ?? '');
    const memo = JSON.parse(readFileSync(path, 'utf8')) as { conf: Record<string, unknown> };
    writeFileSync(path, JSON.stringify({ ...memo, conf: { ...memo.conf, exclude_namespaces: ['apps'] } }));
    expect((await plugin(pod('apps'), CONF)).stderr).toContain('namespace apps is excluded');
    // Not a Kubernetes pod is enrolled: the front declines and the full path answers (here: it cannot enter /run/netns/p).
    const enrolled = await plugin({ ...ENV, CNI_ARGS: 'IgnoreUnknown=1' }, CONF);
    expect(enrolled.exitCode).toBe(1);
    expect(enrolled.stdout).toContain('"code"');
  });

  it('errors stay the full path\'s: an unknown field after a valid entry was remembered', async () => {
    await plugin(pod('kube-system'), CONF);
    const r = await plugin(pod('kube-system'), CONF.replace('"ipv6":"off"', '"ipv6":"off","bogus":1'));
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 2, msg: 'unknown config field "bogus"=1' });
  });
});

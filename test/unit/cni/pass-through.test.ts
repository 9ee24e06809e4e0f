import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { entryText, recall, remember } from '../../../cni/config-memo.js';
import { handlePlugin } from '../../../cni/handler.js';
import { passThroughLine, tryPassThrough } from '../../../cni/pass-through.js';
import type { Runner } from '../../../src/exec/runner.js';
import { createLogger } from '../../../src/log.js';
import { fakeHost } from '../../helpers/cli.js';

/**
 * The plugin's fast path (cni/pass-through.ts) against the full path (cni/handler.ts): for every pass-through
 * the fast path answers, the answer is the full path's — stdout, the log line, the log file, exit 0 — and
 * everything else it declines, leaving the full path to answer (errors, enrolled pods, warnings).
 */

const PREV = { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: '/run/netns/p' }], ips: [{ address: '198.51.100.7/24', interface: 0, gateway: '198.51.100.1' }], dns: {} };
const POD = (ns: string, extra = '') => ({ CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c0ffee', CNI_NETNS: '/run/netns/p', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin', CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${ns};K8S_POD_NAME=web${extra}` });
const CAP = { capabilities: { 'io.kubernetes.cri.pod-annotations': true } };
const annotated = (a: Record<string, unknown> | null) => ({ ...CAP, runtimeConfig: { 'io.kubernetes.cri.pod-annotations': a } });
const conf = (extra: Record<string, unknown> = {}) => ({ cniVersion: '1.0.0', name: 'net', type: 'meshcap-cni', prevResult: PREV, ipv6: 'off', ...extra });

/** No command may run on a pass-through. */
const noRunner = (): Runner => ({
  run: () => {
    throw new Error('a pass-through must not run commands');
  },
});

let dir: string;
let logFile: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcmemo-'));
  logFile = join(dir, 'plugin.log');
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-12-01T10:00:00.123Z'));
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

/** The full path, as cni/plugin.ts runs it (it leaves the memo for the next call). */
async function full(env: Record<string, string>, stdin: string) {
  let stderr = '';
  const envWithMemo = { ...env, MESHCAP_CNI_MEMO_DIR: dir };
  const out = await handlePlugin({
    env: envWithMemo,
    stdin,
    host: fakeHost(),
    stderr: { write: (s: string) => (stderr += s) },
    makeRunner: noRunner,
    appendLog: (path, line) => appendFileSync(path, line),
    rememberConfig: (text, c) => remember(envWithMemo, text, c),
  });
  return { ...out, stderr };
}

const fast = (env: Record<string, string>, stdin: string) => tryPassThrough({ ...env, MESHCAP_CNI_MEMO_DIR: dir }, stdin);

/** Primes the memo with the full path, then asks both paths the same call; the fast answer must be the full one. */
async function sideBySide(env: Record<string, string>, c: Record<string, unknown>, seed: Record<string, unknown> = c) {
  await full(env, JSON.stringify(seed));
  rmSync(logFile, { force: true });
  const stdin = JSON.stringify(c);
  const want = await full(env, stdin);
  const wantFile = readOptional(logFile);
  rmSync(logFile, { force: true });
  const got = fast(env, stdin);
  if (got !== undefined && got.logFile !== undefined && got.log !== '') appendFileSync(got.logFile, got.log);
  return { want, wantFile, got, gotFile: readOptional(logFile) };
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

describe('the fast path answers as the full path does', () => {
  const cases: [string, Record<string, string>, Record<string, unknown>][] = [
    ['an excluded namespace (kube-system by default)', POD('kube-system'), conf()],
    ['a namespace the config excludes, annotations passed', POD('infra'), conf({ exclude_namespaces: ['infra'], ...annotated({ 'sidecar.istio.io/inject': 'true' }) })],
    ['a runtime that passed no annotations (null)', POD('default'), conf(annotated(null))],
    ['a pod without injection status', POD('default'), conf(annotated({ app: 'web' }))],
    ['sidecar.istio.io/inject: "false"', POD('default'), conf(annotated({ 'sidecar.istio.io/inject': 'false', 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' }))],
    ['a gateway template', POD('default'), conf(annotated({ 'inject.istio.io/templates': 'gateway', 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' }))],
    ['an older cniVersion (result converted)', POD('kube-system'), conf({ cniVersion: '0.4.0', prevResult: { ...PREV, cniVersion: '0.4.0' } })],
    ['CNI args in the config', POD('kube-system'), conf({ args: { cni: { labels: ['a'] } } })],
    ['log_file set', POD('kube-system'), { ...conf(), log_file: '__LOG__' }],
    ['log_level warn (no line)', POD('kube-system'), conf({ log_level: 'warn' })],
    ['ambient: a sidecar pod', POD('default'), conf({ mode: 'ambient', ...annotated({ 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' }) })],
    ['ambient: redirection disabled', POD('default'), conf({ mode: 'ambient', ...annotated({ 'ambient.istio.io/redirection': 'disabled' }) })],
  ];

  it.each(cases)('%s', async (_name, env, raw) => {
    const c = JSON.parse(JSON.stringify(raw).replace('"__LOG__"', JSON.stringify(logFile))) as Record<string, unknown>;
    const { want, wantFile, got, gotFile } = await sideBySide(env, c);
    expect(want.exitCode).toBe(0);
    expect(want.stderr).toContain('pod passes through untouched'.slice(0, raw['log_level'] === 'warn' ? 0 : undefined));
    expect(got).toBeDefined();
    expect(got?.stdout).toBe(want.stdout);
    expect(got?.log).toBe(want.stderr);
    expect(gotFile).toBe(wantFile);
  });

  it('uses a memo made from the same entry written in another key order, and another pod\'s per-call fields', async () => {
    const seed = { type: 'meshcap-cni', ipv6: 'off', name: 'net', cniVersion: '1.0.0', prevResult: { ...PREV, ips: [] }, ...annotated({ other: 'pod' }) };
    const { want, got } = await sideBySide(POD('default'), conf(annotated({ app: 'web' })), seed);
    expect(got?.stdout).toBe(want.stdout);
    expect(got?.log).toBe(want.stderr);
  });

  it('writes pino\'s line: the same bytes as the full path\'s child logger for any printable id and reason', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,70}$/), fc.string({ unit: fc.constantFrom(...' !"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~'.split('')), maxLength: 90 }), (id, reason) => {
        let line = '';
        createLogger({ level: 'info', format: 'json', sink: { write: (s: string) => (line += s) }, name: 'meshcap-cni' }).child({ command: 'ADD', container: id }).info({ reason }, 'pod passes through untouched');
        expect(passThroughLine(id, reason, new Date())).toBe(line);
      }),
    );
  });
});

describe('the fast path declines, and the full path answers', () => {
  async function declines(env: Record<string, string>, c: Record<string, unknown>, seed: Record<string, unknown> = conf()) {
    await full(POD('kube-system'), JSON.stringify(seed));
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(1);
    return fast(env, JSON.stringify(c));
  }

  it.each([
    ['an injected pod (enrolled)', POD('default'), conf(annotated({ 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' })), conf(CAP)],
    ['a pod outside Kubernetes (the network opts it in)', { ...POD('x'), CNI_ARGS: 'IgnoreUnknown=1' }, conf(), conf()],
    ['an ambient pod (enrolled)', POD('default'), conf({ mode: 'ambient' }), conf({ mode: 'ambient' })],
    ['a warning to log (an unknown redirection value)', POD('default'), conf({ mode: 'ambient', ...annotated({ 'ambient.istio.io/redirection': 'sometimes', 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' }) }), conf({ mode: 'ambient' })],
    ['a warning to log (the entry does not declare the annotations capability)', POD('default'), conf(), conf()],
    ['a status annotation that is not JSON (an error)', POD('default'), conf(annotated({ 'sidecar.istio.io/status': 'nope' })), conf(CAP)],
    ['an annotation value that is not a string', POD('default'), conf(annotated({ 'sidecar.istio.io/inject': false })), conf(CAP)],
    ['no prevResult', POD('kube-system'), { cniVersion: '1.0.0', name: 'net', type: 'meshcap-cni', ipv6: 'off' }, conf()],
    ['prevResult that is not an object', POD('kube-system'), conf({ prevResult: [] }), conf()],
    ['a "__proto__" key in prevResult', POD('kube-system'), { ...conf(), prevResult: JSON.parse('{"__proto__":{"x":1},"cniVersion":"1.0.0"}') as unknown }, conf()],
    ['valid-attachments (GC\'s field)', POD('kube-system'), conf({ 'cni.dev/valid-attachments': [] }), conf()],
    ['an entry never validated (another field)', POD('kube-system'), conf({ ipv6: 'on' }), conf()],
    ['an unknown field', POD('kube-system'), conf({ bogus: 1 }), conf()],
    ['an invalid container id (the env error is the full path\'s)', { ...POD('kube-system'), CNI_CONTAINERID: '-x' }, conf(), conf()],
    ['CHECK', { ...POD('kube-system'), CNI_COMMAND: 'CHECK' }, conf(), conf()],
    ['a reason outside printable ASCII', POD('kube-sÿstem'), conf({ exclude_namespaces: ['kube-sÿstem'] }), conf({ exclude_namespaces: ['kube-sÿstem'] })],
  ] as [string, Record<string, string>, Record<string, unknown>, Record<string, unknown>][])('%s', async (_name, env, c, seed) => {
    expect(await declines(env, c, seed)).toBeUndefined();
  });

  it('without a memo, with the memo off or at a relative path, and on stdin that is not JSON', async () => {
    expect(fast(POD('kube-system'), JSON.stringify(conf()))).toBeUndefined();
    await full(POD('kube-system'), JSON.stringify(conf()));
    expect(fast(POD('kube-system'), JSON.stringify(conf()))).toBeDefined();
    for (const memo of ['off', 'relative/dir']) expect(tryPassThrough({ ...POD('kube-system'), MESHCAP_CNI_MEMO_DIR: memo }, JSON.stringify(conf()))).toBeUndefined();
    expect(fast(POD('kube-system'), '{not json')).toBeUndefined();
  });

  it('never trusts a memo whose text or version differs from the entry', async () => {
    await full(POD('kube-system'), JSON.stringify(conf()));
    const [file] = readdirSync(dir);
    const path = join(dir, file ?? '');
    const memo = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...memo, version: '0.0.1' }));
    expect(fast(POD('kube-system'), JSON.stringify(conf()))).toBeUndefined();
    writeFileSync(path, JSON.stringify({ ...memo, entry: String(memo['entry']).replace('"off"', '"on"') }));
    expect(fast(POD('kube-system'), JSON.stringify(conf()))).toBeUndefined();
    writeFileSync(path, '{');
    expect(fast(POD('kube-system'), JSON.stringify(conf()))).toBeUndefined();
  });
});

describe('the memo', () => {
  it('leaves no memo of another meshcap version behind when it writes one', async () => {
    writeFileSync(join(dir, '0.0.1-deadbeef.json'), '{}');
    writeFileSync(join(dir, 'unrelated.txt'), 'kept');
    await full(POD('kube-system'), JSON.stringify(conf()));
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(1);
    expect(readdirSync(dir)).toContain('unrelated.txt');
    expect(readdirSync(dir)).not.toContain('0.0.1-deadbeef.json');
  });

  it('is written only by an ADD the schema accepted, once, and decides from the schema\'s output it holds', async () => {
    expect((await full(POD('kube-system'), JSON.stringify(conf({ ipv6: 'sometimes' })))).exitCode).toBe(1);
    expect((await full({ ...POD('kube-system'), CNI_COMMAND: 'CHECK' }, JSON.stringify(conf()))).exitCode).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
    await full(POD('kube-system'), JSON.stringify(conf()));
    await full(POD('kube-system'), JSON.stringify(conf()));
    expect(readdirSync(dir)).toHaveLength(1);
    const entry = entryText(conf());
    expect(recall(dir, entry)).toMatchObject({ exclude_namespaces: ['kube-system'], mode: 'sidecar', log_level: 'info' });
    // The decision comes from the memo's config, not from re-reading the entry: a memo that says otherwise is
    // followed (which is why only root may write it, in /run/meshcap).
    const [file] = readdirSync(dir);
    const path = join(dir, file ?? '');
    const memo = JSON.parse(readFileSync(path, 'utf8')) as { conf: Record<string, unknown> };
    writeFileSync(path, JSON.stringify({ ...memo, conf: { ...memo.conf, exclude_namespaces: ['default'] } }));
    expect(fast(POD('default'), JSON.stringify(conf()))?.log).toContain('namespace default is excluded');
  });
});

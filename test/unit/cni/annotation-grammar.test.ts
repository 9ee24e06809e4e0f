import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handlePlugin } from '../../../cni/handler.js';
import { Annotation } from '../../../src/config/annotations.js';
import { AMBIENT_ANNOTATIONS, SIDECAR_ANNOTATIONS } from '../../../src/config/annotation-grammar.js';
import { findMeshcapRefusals } from '../../../src/analyze/lint/annotation-values.js';
import { lintManifests } from '../../../src/analyze/lint/lint.js';
import { DEFAULT_LINT_OPTIONS } from '../../../src/analyze/lint/context.js';
import type { Runner } from '../../../src/exec/runner.js';
import { ANNOTATION_CASES, expectedOfMeshcap, judgeCase, type AnnotationCase } from '../../conformance/istio-cni-annotations/cases.js';
import { fakeHost } from '../../helpers/cli.js';
import { REPO_ROOT } from '../../helpers/paths.js';

/**
 * The case table (test/conformance/istio-cni-annotations, run for real in test/netns/cni-annotations.test.ts)
 * through the in-process door and through lint: the same accept/refuse for every case, the refusal naming the
 * same annotation; the judge catches a wrong expectation; every departure is documented.
 */
const STATUS = { [Annotation.status]: JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };
const ok: Runner = { run: async () => ({ exitCode: 0, stdout: '', stderr: '' }) };

async function add(annotations: Readonly<Record<string, string>>, mode: 'sidecar' | 'ambient' = 'sidecar') {
  let stderr = '';
  const out = await handlePlugin({
    env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'eth0', CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web' },
    stdin: JSON.stringify({
      cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', ipv6: 'off', mode,
      capabilities: { 'io.kubernetes.cri.pod-annotations': true },
      runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { ...(mode === 'sidecar' ? STATUS : {}), ...annotations } },
      prevResult: { cniVersion: '1.0.0', ips: [{ address: '198.51.100.2/24' }] },
    }),
    host: fakeHost(),
    stderr: { write: (s: string) => (stderr += s) },
    makeRunner: () => ok,
  });
  const msg = out.exitCode === 0 ? '' : String((JSON.parse(out.stdout) as { msg?: unknown }).msg);
  return { accepted: out.exitCode === 0, msg, stderr };
}

const podYaml = (annotations: Readonly<Record<string, string>>) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', annotations }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] } });

describe('the istio-cni annotation case table, in process', () => {
  it(`holds ${ANNOTATION_CASES.length} cases, each with a source`, () => {
    expect(ANNOTATION_CASES.length).toBeGreaterThanOrEqual(70);
    for (const c of ANNOTATION_CASES) expect(c.source).toMatch(/^(cni|pkg)\//);
  });

  it.each(ANNOTATION_CASES.map((c) => [c.name, c] as const))('door and lint agree: %s', async (_n, c) => {
    const door = await add(c.annotations, c.mode ?? 'sidecar');
    expect(door.accepted ? 'accept' : 'refuse').toBe(expectedOfMeshcap(c));
    const lint = findMeshcapRefusals(c.annotations, c.mode ?? 'sidecar');
    expect(lint.length === 0).toBe(door.accepted);
    if (!door.accepted) {
      const first = lint[0];
      expect(door.msg).toBe(`invalid annotation ${first?.key}=${JSON.stringify(first?.value)}: ${first?.reason}`);
    }
  });

  it('lint reports every refused case (MCL008; MCL009 for includeOutboundPorts) when the pod runs under meshcap-cni', () => {
    for (const c of ANNOTATION_CASES.filter((x) => expectedOfMeshcap(x) === 'refuse')) {
      const mode = c.mode ?? 'sidecar';
      const codes = lintManifests([{ file: 'pod.json', text: podYaml(c.annotations) }], { ...DEFAULT_LINT_OPTIONS, mode, cni: true }).map((f) => f.code);
      expect(codes.some((code) => code === 'MCL008' || code === 'MCL009'), `${c.name}: ${codes.join(',')}`).toBe(true);
    }
  });

  it('the judge catches a wrong expectation (a refusal expected where the door accepts, and the reverse)', () => {
    const accepted = ANNOTATION_CASES.find((c) => expectedOfMeshcap(c) === 'accept') as AnnotationCase;
    const refused = ANNOTATION_CASES.find((c) => expectedOfMeshcap(c) === 'refuse') as AnnotationCase;
    expect(judgeCase({ ...accepted, istio: { refused: 'validation' } }, { accepted: true, sameRules: true })).toEqual(['expected a refusal, but ADD succeeded']);
    expect(judgeCase({ ...refused, istio: { flags: {} } }, { accepted: false, message: 'x' })[0]).toMatch(/^expected the rules istio-cni derives/);
    expect(judgeCase(refused, { accepted: false, message: 'invalid annotation something else' })[0]).toMatch(/does not name an annotation/);
  });

  it('every departure is a section of docs/differences-from-istio.md', () => {
    const doc = readFileSync(resolve(REPO_ROOT, 'docs', 'differences-from-istio.md'), 'utf8');
    const slugs = [...doc.matchAll(/^#+ (.+)$/gm)].map((m) => (m[1] ?? '').toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-'));
    const departures = ANNOTATION_CASES.filter((x) => x.departure !== undefined);
    expect(departures.length).toBeGreaterThan(0);
    for (const c of departures) expect(slugs).toContain(c.departure);
  });
});

describe('the grammar table', () => {
  it('docs/cni.md lists every annotation of the table with its grammar', () => {
    const doc = readFileSync(resolve(REPO_ROOT, 'docs', 'cni.md'), 'utf8');
    for (const g of [...SIDECAR_ANNOTATIONS, ...AMBIENT_ANNOTATIONS]) expect(doc, g.name).toContain(`| \`${g.name}\` | ${g.grammar} |`);
  });

  it('a bad excludeInboundPorts is named with the value the pod carries, not the merged list', async () => {
    const r = await add({ [Annotation.excludeInboundPorts]: 'abcd,2345' });
    expect(r.msg).toBe(`invalid annotation ${Annotation.excludeInboundPorts}="abcd,2345": "abcd" is not a port (a decimal 0-65535)`);
  });

  it('ambient booleans that do not parse are ignored with a warning, as Istio does; a bad interface list fails ADD', async () => {
    const ignored = await add({ [Annotation.dnsCapture]: 'maybe', [Annotation.bypassInboundCapture]: 'yes' }, 'ambient');
    expect(ignored.accepted).toBe(true);
    expect(ignored.stderr).toContain(`ignored ${Annotation.dnsCapture}=\\"maybe\\"`);
    expect(ignored.stderr).toContain(`ignored ${Annotation.bypassInboundCapture}=\\"yes\\"`);
    expect((await add({ [Annotation.rerouteVirtualInterfaces]: ' net1, ,net2 ' }, 'ambient')).accepted).toBe(true);
    const bad = await add({ [Annotation.rerouteVirtualInterfaces]: 'net1,net 2' }, 'ambient');
    expect(bad.msg).toContain(`invalid annotation ${Annotation.rerouteVirtualInterfaces}="net1,net 2"`);
  });
});

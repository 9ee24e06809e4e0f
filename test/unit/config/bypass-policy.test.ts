import { describe, expect, it } from 'vitest';
import { bypassPolicySchema, judgeBypass, listDenied, NARROWING_ANNOTATIONS, parseBypassPolicy } from '../../../src/config/bypass-policy.js';
import { Annotation } from '../../../src/config/annotations.js';
import { runCli } from '../../helpers/cli.js';

/** The bypass policy's schema (hostile input included) and its judgement, shared by the CNI door, lint and the node agent. */
describe('bypass policy schema', () => {
  it('lists the annotations that narrow capture, sidecar and ambient', () => {
    expect(NARROWING_ANNOTATIONS).toEqual([
      Annotation.includeOutboundIPRanges, Annotation.excludeOutboundIPRanges, Annotation.excludeInboundPorts, Annotation.includeInboundPorts,
      Annotation.excludeOutboundPorts, Annotation.excludeInterfaces, Annotation.bypassInboundCapture, Annotation.dnsCapture,
    ]);
  });

  it.each([
    ['deny missing', {}, 'bypass_policy.deny'],
    ['deny empty', { deny: [] }, 'bypass_policy.deny: must name at least one'],
    ['deny a number', { deny: 5 }, 'bypass_policy.deny'],
    ['deny of objects', { deny: [{}] }, 'bypass_policy.deny.0'],
    ['a name with a space', { deny: [` ${Annotation.excludeInterfaces}`] }, 'bypass_policy.deny.0: must be "*" or an annotation that narrows capture'],
    ['a name with a newline', { deny: [`${Annotation.excludeInterfaces}\n`] }, 'bypass_policy.deny.0'],
    ['an annotation that widens capture', { deny: [Annotation.includeOutboundPorts] }, 'bypass_policy.deny.0'],
    ['a huge deny list', { deny: Array.from({ length: 65 }, () => '*') }, 'bypass_policy.deny: at most 64'],
    ['namespaces as a string', { deny: ['*'], allow_namespaces: 'istio-system' }, 'bypass_policy.allow_namespaces'],
    ['a namespace with a space', { deny: ['*'], allow_namespaces: ['istio system'] }, 'bypass_policy.allow_namespaces.0'],
    ['a huge namespace list', { deny: ['*'], allow_namespaces: Array.from({ length: 1025 }, (_, i) => `ns${i}`) }, 'bypass_policy.allow_namespaces: at most 1024'],
    ['an unknown field', { deny: ['*'], allowNamespaces: [] }, 'unknown field "allowNamespaces"'],
    ['null', null, 'bypass_policy'],
    ['a list', [], 'bypass_policy'],
  ])('refuses %s, naming the field', (_name, json, reason) => {
    const r = parseBypassPolicy(JSON.stringify(json));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });

  it('refuses text that is not JSON', () => {
    expect(parseBypassPolicy('{deny: *}')).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
  });

  it('expands "*" to every narrowing annotation', () => {
    expect(listDenied(bypassPolicySchema.parse({ deny: ['*'] }))).toEqual(NARROWING_ANNOTATIONS);
  });
});

describe('judgeBypass', () => {
  const policy = bypassPolicySchema.parse({ deny: [Annotation.excludeOutboundIPRanges], allow_namespaces: ['istio-system'] });

  it('denies a denied annotation with any value outside the allowed namespaces, naming annotation, value and policy', () => {
    expect(judgeBypass(policy, { [Annotation.excludeOutboundIPRanges]: '' }, 'apps')).toEqual({
      allowed: false, annotation: Annotation.excludeOutboundIPRanges, value: '',
      reason: `bypass_policy denies annotation ${Annotation.excludeOutboundIPRanges}="" in namespace "apps" (allowed: istio-system)`,
    });
  });

  it('allows it in an allowed namespace, other annotations anywhere, and everything without a policy', () => {
    expect(judgeBypass(policy, { [Annotation.excludeOutboundIPRanges]: '10.0.0.0/8' }, 'istio-system')).toEqual({ allowed: true });
    expect(judgeBypass(policy, { [Annotation.excludeOutboundPorts]: '3306' }, 'apps')).toEqual({ allowed: true });
    expect(judgeBypass(undefined, { [Annotation.excludeOutboundIPRanges]: '10.0.0.0/8' }, 'apps')).toEqual({ allowed: true });
  });
});

describe('meshcap lint --bypass-policy', () => {
  it('refuses a malformed policy with exit 2 naming the flag and the field', async () => {
    const r = await runCli(['lint', '--bypass-policy', '{"deny":["nope"]}', '/dev/null']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--bypass-policy');
    expect(r.stderr).toContain('bypass_policy.deny.0');
  });

  it('reads the policy from @FILE', async () => {
    const r = await runCli(['lint', '--bypass-policy', '@/nonexistent/policy.json', '/dev/null']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no such file');
  });
});

describe('bypass_policy in the plugin config at ADD', () => {
  it('refuses a malformed policy with a CNI error naming the field, before anything runs', async () => {
    const { handlePlugin } = await import('../../../cni/handler.js');
    const { fakeHost } = await import('../../helpers/cli.js');
    const calls: string[] = [];
    for (const [policy, field] of [[{ deny: 'all' }, 'bypass_policy.deny'], [{ deny: ['*'], extra: 1 }, 'bypass_policy.extra']] as const) {
      const out = await handlePlugin({
        env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'eth0', CNI_ARGS: '' },
        stdin: JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', ipv6: 'off', bypass_policy: policy, prevResult: { cniVersion: '1.0.0' } }),
        host: fakeHost(),
        stderr: { write: () => true },
        makeRunner: () => ({ run: async (cmd) => (calls.push(cmd), { exitCode: 0, stdout: '', stderr: '' }) }),
      });
      expect(out.exitCode).toBe(1);
      expect(String((JSON.parse(out.stdout) as { msg: string }).msg)).toContain(`"${field}"`);
    }
    expect(calls).toEqual([]);
  });
});

describe('bypass_policy on an ambient network', () => {
  it('refuses an enrolled ambient pod that turns inbound capture off outside the allowed namespaces, and allows it inside', async () => {
    const { handlePlugin } = await import('../../../cni/handler.js');
    const { fakeHost } = await import('../../helpers/cli.js');
    const add = async (namespace: string) => {
      const calls: string[] = [];
      const out = await handlePlugin({
        env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'eth0', CNI_ARGS: `K8S_POD_NAMESPACE=${namespace};K8S_POD_NAME=web` },
        stdin: JSON.stringify({
          cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', mode: 'ambient', ipv6: 'off', bypass_policy: { deny: ['*'], allow_namespaces: ['ingress'] },
          capabilities: { 'io.kubernetes.cri.pod-annotations': true },
          runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { [Annotation.bypassInboundCapture]: 'true' } },
          prevResult: { cniVersion: '1.0.0', ips: [{ address: '198.51.100.2/24' }] },
        }),
        host: fakeHost(),
        stderr: { write: () => true },
        makeRunner: () => ({ run: async (cmd) => (calls.push(cmd), { exitCode: 0, stdout: '', stderr: '' }) }),
      });
      return { out, calls };
    };
    const denied = await add('apps');
    expect(JSON.parse(denied.out.stdout)).toMatchObject({ code: 103, msg: `bypass_policy denies annotation ${Annotation.bypassInboundCapture}="true" in namespace "apps" (allowed: ingress)` });
    expect(denied.calls).toEqual([]);
    const allowed = await add('ingress');
    expect(allowed.out.exitCode).toBe(0);
    expect(allowed.calls.length).toBeGreaterThan(0);
  });
});

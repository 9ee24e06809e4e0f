import { describe, expect, it } from 'vitest';
import { handlePlugin } from '../../cni/handler.js';
import type { Runner } from '../../src/exec/runner.js';
import { fakeHost, runCli } from '../helpers/cli.js';

/**
 * Values crafted to smuggle restore lines, through every door: rejected, and nothing is applied (every
 * command meshcap tries to start is recorded, and there must be none).
 */
const PAYLOADS = [
  'eth0\n-A OUTPUT -j ACCEPT',
  '80 -j DROP',
  '*\nCOMMIT',
  '10.0.0.0/8 --to-ports 1',
  '10.0.0.0/8\n*filter\n-P INPUT DROP',
  '1337 -j ACCEPT',
  '15001\r\n-A PREROUTING -j DROP',
  '"; -F; "',
  '$(reboot)',
  '-A',
] as const;

/** [flag, env var, CNI config field, annotation] carrying each payload. */
const DOORS: [string, string | undefined, string, string | undefined][] = [
  ['--istio-exclude-interfaces', 'ISTIO_EXCLUDE_INTERFACES', 'exclude_interfaces', 'traffic.sidecar.istio.io/excludeInterfaces'],
  ['--istio-inbound-ports', 'ISTIO_INBOUND_PORTS', 'include_inbound_ports', 'traffic.sidecar.istio.io/includeInboundPorts'],
  ['--istio-service-exclude-cidr', 'ISTIO_SERVICE_EXCLUDE_CIDR', 'exclude_outbound_ip_ranges', 'traffic.sidecar.istio.io/excludeOutboundIPRanges'],
  ['--istio-service-cidr', 'ISTIO_SERVICE_CIDR', 'include_outbound_ip_ranges', 'traffic.sidecar.istio.io/includeOutboundIPRanges'],
  ['--proxy-uid', 'PROXY_UID', 'proxy_uid', undefined],
  ['--istio-local-outbound-ports-exclude', 'ISTIO_LOCAL_OUTBOUND_PORTS_EXCLUDE', 'exclude_outbound_ports', 'traffic.sidecar.istio.io/excludeOutboundPorts'],
  ['--kube-virt-interfaces', 'KUBE_VIRT_INTERFACES', 'kube_virt_interfaces', 'istio.io/reroute-virtual-interfaces'],
];

export const injectionFigures = { tried: 0 };

function recordingRunner(): Runner & { calls: string[] } {
  const calls: string[] = [];
  return { calls, run: async (cmd, args) => (calls.push([cmd, ...args].join(' ')), { exitCode: 0, stdout: '', stderr: '' }) };
}

const cases = DOORS.flatMap((door) => PAYLOADS.map((payload) => ({ door, payload })));

describe('injection through flags and env vars', () => {
  it.each(cases)('$door.0 / $door.1 = $payload', async ({ door: [flag, env], payload }) => {
    const viaFlag = await runCli(['--ipv6', 'off', `${flag}=${payload}`]);
    expect(viaFlag.code).toBe(2);
    expect(viaFlag.commands).toEqual([]);
    injectionFigures.tried++;
    if (env !== undefined) {
      const viaEnv = await runCli(['--ipv6', 'off'], { [env]: payload });
      expect(viaEnv.code).toBe(2);
      expect(viaEnv.commands).toEqual([]);
      injectionFigures.tried++;
    }
  });
});

describe('injection through CNI config fields and pod annotations', () => {
  const ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c0ffee', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'eth0', CNI_ARGS: '' }; // not a Kubernetes pod: the network opts it in, so every value is read
  const prevResult = { cniVersion: '1.0.0', ips: [{ address: '198.51.100.7/24' }] };
  const add = async (conf: Record<string, unknown>) => {
    const runner = recordingRunner();
    const out = await handlePlugin({ env: ENV, stdin: JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', prevResult, ipv6: 'off', ...conf }), host: fakeHost(), stderr: { write: () => true }, makeRunner: () => runner });
    return { out, runner };
  };

  it.each(cases)('$door.2 / $door.3 = $payload', async ({ door: [, , field, annotation], payload }) => {
    const viaConf = await add({ [field]: payload });
    expect(viaConf.out.exitCode).toBe(1);
    expect(JSON.parse(viaConf.out.stdout)).toMatchObject({ code: 7 });
    expect(viaConf.runner.calls).toEqual([]);
    injectionFigures.tried++;
    if (annotation !== undefined) {
      const viaAnnotation = await add({ runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { [annotation]: payload } } });
      expect(viaAnnotation.out.exitCode).toBe(1);
      expect(String(JSON.parse(viaAnnotation.out.stdout).msg)).toContain(`annotation ${annotation}`);
      expect(viaAnnotation.runner.calls).toEqual([]);
      injectionFigures.tried++;
    }
  });

  // ambient.istio.io/dns-capture and bypass-inbound-capture are booleans Istio ignores when they do not parse
  // (and so does meshcap: test/unit/cni/annotation-grammar.test.ts); the list annotation is refused.
  it('also refuses them in ambient annotations', async () => {
    for (const payload of PAYLOADS) {
      const runner = recordingRunner();
      const out = await handlePlugin({
        env: ENV,
        stdin: JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', mode: 'ambient', prevResult, ipv6: 'off', runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { 'istio.io/reroute-virtual-interfaces': payload } } }),
        host: fakeHost(),
        stderr: { write: () => true },
        makeRunner: () => runner,
      });
      expect(out.exitCode).toBe(1);
      expect(runner.calls).toEqual([]);
      injectionFigures.tried++;
    }
  });
});

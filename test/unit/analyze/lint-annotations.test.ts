import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Annotation } from '../../../src/config/annotations.js';
import { checkAnnotationValue, checkMeshcapValue } from '../../../src/analyze/lint/annotation-values.js';
import { findGrammar } from '../../../src/config/annotation-grammar.js';
import { runCli } from '../../helpers/cli.js';
import { lintManifests } from '../../../src/analyze/lint/lint.js';
import { DEFAULT_LINT_OPTIONS } from '../../../src/analyze/lint/context.js';

/**
 * One grammar, three doors: lint judges an annotation value with meshcap's own validators (those of the CLI
 * flag and of the CNI plugin, which maps the annotation onto that flag) and with the injection webhook's rules
 * where they differ.
 */
describe('annotation values', () => {
  it.each([
    [Annotation.includeOutboundIPRanges, '10.0.0.0/8, 192.0.2.0/24', 'webhook'],
    [Annotation.includeOutboundIPRanges, '10.0.0.0/8,', 'webhook'],
    [Annotation.includeOutboundIPRanges, '192.0.2.1', 'webhook'],
    [Annotation.excludeOutboundIPRanges, '*', 'webhook'],
    [Annotation.excludeInboundPorts, '65536', 'webhook'],
    [Annotation.excludeInboundPorts, '80,,90', 'webhook'],
    [Annotation.excludeInterfaces, '1eth', 'webhook'],
    [Annotation.interceptionMode, '', 'webhook'],
    [Annotation.statusPort, '15020x', 'webhook'],
    [Annotation.readinessFailureThreshold, '4294967296', 'webhook'],
    [Annotation.proxyConfig, '[1, 2]', 'webhook'],
    [Annotation.proxyConfig, 'holdApplicationUntilProxyStarts: "yes"', 'webhook'],
    [Annotation.excludeInterfaces, 'eth0,,eth1', 'webhook'],
    [Annotation.excludeInterfaces, 'eth0@if2', 'webhook'],
    [Annotation.includeInboundPorts, '080', 'meshcap'],
    [Annotation.excludeInboundPorts, '*', 'webhook'],
    [Annotation.excludeOutboundPorts, '  ', 'meshcap'],
    [Annotation.interceptionMode, 'NONE', 'meshcap'],
  ] as const)('rejects %s=%j (by the %s)', (key, value, by) => {
    expect(checkAnnotationValue(key, value)?.by).toBe(by);
  });

  it.each([
    [Annotation.includeOutboundIPRanges, '*'],
    [Annotation.includeOutboundIPRanges, ''],
    [Annotation.includeOutboundIPRanges, '10.0.0.0/8,2001:db8::/32'],
    [Annotation.includeInboundPorts, '*'],
    [Annotation.excludeInboundPorts, '15020,8080'],
    [Annotation.excludeInterfaces, 'eth1,net1.100'],
    [Annotation.excludeInterfaces, ''],
    [Annotation.excludeInterfaces, 'eth1, eth2'],
    [Annotation.excludeInboundPorts, '0'],
    [Annotation.excludeInboundPorts, '  '],
    [Annotation.excludeOutboundPorts, ' 3306'],
    [Annotation.excludeOutboundPorts, ''],
    [Annotation.includeInboundPorts, ''],
    [Annotation.statusPort, '0'],
    [Annotation.proxyConfig, '{"holdApplicationUntilProxyStarts": true, "interceptionMode": "TPROXY"}'],
    ['sidecar.istio.io/proxyCPU', 'anything'],
  ])('accepts %s=%j', (key, value) => {
    expect(checkAnnotationValue(key, value)).toBeUndefined();
  });

  /** The CLI flag each annotation becomes (istio-init's arguments; meshcap-cni maps them the same way). */
  const FLAG: Record<string, string> = {
    [Annotation.includeOutboundIPRanges]: '--istio-service-cidr',
    [Annotation.excludeOutboundIPRanges]: '--istio-service-exclude-cidr',
    [Annotation.includeInboundPorts]: '--istio-inbound-ports',
    [Annotation.excludeInboundPorts]: '--istio-local-exclude-ports',
    [Annotation.excludeOutboundPorts]: '--istio-local-outbound-ports-exclude',
    [Annotation.excludeInterfaces]: '--istio-exclude-interfaces',
    [Annotation.kubevirtInterfaces]: '--kube-virt-interfaces',
  };
  const ALPHABET = ['0', '1', '8', '9', '5', ',', ' ', '/', '.', ':', '*', 'a', 'e', 't', 'h', '-', '+', '2001:db8::', '10.0.0.0', '65535', '65536'];
  const value = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 8 }).map((a) => a.join(''));

  it('a value the annotation grammar accepts always becomes a flag the CLI accepts, and lint says what the grammar says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(FLAG)), value, async (key, v) => {
        const read = findGrammar('sidecar', key)?.read(v);
        expect(checkMeshcapValue(key, v) === undefined).toBe(read?.ok);
        if (read === undefined || !read.ok) return;
        const res = await runCli(['-n', '--ipv6', 'off', `${FLAG[key]}=${read.value}`]);
        expect(res.code, `${key}=${JSON.stringify(v)} → ${JSON.stringify(read.value)}: ${res.stderr}`).toBe(0);
      }),
      { seed: 14, numRuns: 300 },
    );
  });
});

describe('coverage findings read values as the plugin does', () => {
  const lintPod = (annotations: Record<string, string>) =>
    lintManifests([{ file: 'p.json', text: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', annotations }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] } }) }], DEFAULT_LINT_OPTIONS);

  it('names trimmed ports in MCL012 and takes a blank excludeInboundPorts as none', () => {
    expect(lintPod({ [Annotation.excludeOutboundPorts]: ' 3306 , 5432' }).map((f) => f.message)).toEqual(['traffic on outbound ports 3306,5432 bypasses the proxy (no mTLS, policy or telemetry)']);
    expect(lintPod({ [Annotation.excludeInboundPorts]: '   ', [Annotation.includeInboundPorts]: '8080' })).toEqual([]);
  });
});

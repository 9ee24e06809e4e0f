/**
 * Every Istio ambient golden mapped to meshcap flags, as test/conformance/istio/ambient/CASES.md says.
 * The in-pod goldens use Istio's test value for the IPv6 probe address; hostprobe uses the production default.
 */
import type { GoldenCase } from './sidecar-cases.js';

const TEST_SNAT_V6 = ['--host-probe-snat-v6', 'e9ac:1e77:90ca:399f:4d6d:ece2:2f9b:3164'];
const REDIRECT = ['ambient', '-n', '--inbound', 'redirect', ...TEST_SNAT_V6];

const inpod = (golden: string, extra: readonly string[]): GoldenCase[] => [
  { golden, argv: [...REDIRECT, ...extra, '--ipv6', 'off'] },
  { golden: `${golden}_ipv6`, argv: [...REDIRECT, ...extra, '--ipv6', 'on'] },
];

export const AMBIENT_CASES: readonly GoldenCase[] = [
  ...inpod('default', ['--redirect-dns']),
  ...inpod('ingress', ['--redirect-dns=false', '--ingress-mode']),
  ...inpod('virtual_interfaces', ['--virtual-interfaces', 'fake1s0f0,fake1s0f1']),
  ...inpod('ingress_and_virtual_interfaces', ['--ingress-mode', '--virtual-interfaces', 'fake1s0f0,fake1s0f1']),
  ...inpod('dns_pod_enabled_and_off_globally', ['--redirect-dns=false', '--pod-dns-capture', 'true']),
  ...inpod('dns_pod_disabled_and_on_globally', ['--redirect-dns', '--pod-dns-capture', 'false']),
  { golden: 'hostprobe', argv: ['ambient-host', '-n', '--ipv6', 'off'] },
  { golden: 'hostprobe_ipv6', argv: ['ambient-host', '-n', '--ipv6', 'on'] },
];

/** Istio 1.24's TPROXY layout: restore blocks only (CASES.md §3). */
export const AMBIENT_TPROXY_CASES: readonly GoldenCase[] = [
  { golden: 'legacy-tproxy-1.24/tproxy', argv: ['ambient', '-n', '--inbound', 'tproxy', '--redirect-dns', ...TEST_SNAT_V6, '--ipv6', 'off'] },
  { golden: 'legacy-tproxy-1.24/tproxy_ipv6', argv: ['ambient', '-n', '--inbound', 'tproxy', '--redirect-dns', ...TEST_SNAT_V6, '--ipv6', 'on'] },
];

/**
 * Every Istio sidecar golden mapped to meshcap flags and env, exactly as test/conformance/istio/sidecar/
 * CASES.md says. `[IPv6]` → `--ipv6 on`; resolv.conf nameservers → `--dns-servers`; "no nameservers" →
 * `--resolv-conf /dev/null`.
 */
export interface GoldenCase {
  readonly golden: string;
  readonly argv: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** The java/ftp group names do not exist on a test host: such cases cannot be applied for real. */
  readonly appliable?: boolean;
}

const BASE = ['-n', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337'];
const V4 = ['--ipv6', 'off'];
const V6 = ['--ipv6', 'on'];
const NO_NS = ['--resolv-conf', '/dev/null'];

export const CAPTURE_CASES: readonly GoldenCase[] = [
  { golden: 'empty', argv: [...BASE, ...V4] },
  { golden: 'ipv6-empty-inbound-ports', argv: [...BASE, '-b', '', ...V6] },
  { golden: 'ip-range', argv: ['-n', '-p', '15001', '-z', '15006', '-u', '3,4', '-g', '1,2', '-x', '1.1.0.0/16', '-i', '9.9.0.0/16', '--redirect-dns', '--dns-servers', '127.0.0.53', ...V4] },
  { golden: 'tproxy', argv: ['-n', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'TPROXY', '-b', '*', '-x', '1.1.0.0/16', '-i', '9.9.0.0/16', '-c', 'not-istio-nic', '--redirect-dns', '--dns-servers', '127.0.0.53', ...V6] },
  { golden: 'ipv6-inbound-ports', argv: [...BASE, '-b', '4000,5000', ...V6] },
  { golden: 'ipv6-virt-interfaces', argv: [...BASE, '-b', '4000,5000', '-k', 'eth0,eth1', ...V6] },
  { golden: 'ipv6-ipnets', argv: [...BASE, '-b', '4000,5000', '-d', '6000,7000,', '-k', 'eth0,eth1', '-x', '2001:db8::/32', '-i', '2001:db8::/32', ...V6] },
  { golden: 'ipv6-uid-gid', argv: [...BASE, '-u', '3,4', '-g', '1,2', '-b', '4000,5000', '-d', '6000,7000', '-k', 'eth0,eth1', '-x', '2001:db8::/32', '-i', '2001:db8::/32', ...V6] },
  { golden: 'ipv6-outbound-ports', argv: [...BASE, '-b', '', '-q', '32000,31000', ...V6] },
  { golden: 'kube-virt-interfaces', argv: [...BASE, '-k', 'eth1,eth2', '-i', '*', ...V4] },
  { golden: 'ipnets', argv: [...BASE, '-i', '10.0.0.0/8', ...V4] },
  { golden: 'ipnets-with-kube-virt-interfaces', argv: [...BASE, '-k', 'eth1,eth2', '-i', '10.0.0.0/8', ...V4] },
  { golden: 'inbound-ports-include', argv: [...BASE, '-b', '32000,31000', ...V4] },
  { golden: 'inbound-ports-wildcard', argv: [...BASE, '-b', '*', ...V4] },
  { golden: 'inbound-ports-tproxy', argv: [...BASE, '-b', '32000,31000', '-m', 'TPROXY', ...V4] },
  { golden: 'inbound-ports-wildcard-tproxy', argv: [...BASE, '-b', '*', '-m', 'TPROXY', ...V4] },
  { golden: 'dns-uid-gid', argv: ['-n', '-p', '15001', '-z', '15006', '-u', '3,4', '-g', '1,2', '--redirect-dns', '--dns-servers', '127.0.0.53,::127.0.0.53', ...V6] },
  { golden: 'ipv6-dns-uid-gid', argv: ['-n', '-p', '15001', '-z', '15006', '-u', '3,4', '-g', '1,2', '--redirect-dns', ...NO_NS, ...V6] },
  { golden: 'outbound-owner-groups', argv: [...BASE, ...V4], env: { ISTIO_OUTBOUND_OWNER_GROUPS: 'java,202' }, appliable: false },
  { golden: 'outbound-owner-groups-exclude', argv: [...BASE, ...V4], env: { ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE: '888,ftp' }, appliable: false },
  { golden: 'ipv6-dns-outbound-owner-groups', argv: [...BASE, '--redirect-dns', ...NO_NS, ...V6], env: { ISTIO_OUTBOUND_OWNER_GROUPS: 'java,202' }, appliable: false },
  { golden: 'ipv6-dns-outbound-owner-groups-exclude', argv: [...BASE, '--redirect-dns', ...NO_NS, ...V6], env: { ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE: '888,ftp' }, appliable: false },
  { golden: 'outbound-ports-include', argv: [...BASE, '-q', '32000,31000', ...V4] },
  { golden: 'loopback-outbound-iprange', argv: ['-n', '-p', '15001', '-z', '15006', '-u', '3,4', '-g', '1,2', '-i', '127.1.2.3/32', '--redirect-dns', '--dns-servers', '127.0.0.53', ...V4] },
  { golden: 'basic-exclude-nic', argv: [...BASE, '-c', 'not-istio-nic', ...V4] },
  { golden: 'drop-invalid', argv: [...BASE, '--drop-invalid', ...V4] },
  { golden: 'host-ipv4-loopback-cidr', argv: [...BASE, ...V4], env: { ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR: '127.0.0.1/8' } },
];

const CNIBASE = ['-n', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15020,15021,15090', '-o', '15020', ...V4];
const withFlags = (base: readonly string[], over: Record<string, string>): string[] => {
  const out = [...base];
  for (const [flag, value] of Object.entries(over)) {
    const i = out.indexOf(flag);
    if (i >= 0) out[i + 1] = value;
    else out.push(flag, value);
  }
  return out;
};

/** CNI-plugin goldens: v4 restore blocks only (CASES.md §4). */
export const CNI_CASES: readonly GoldenCase[] = [
  { golden: 'basic', argv: CNIBASE },
  { golden: 'include-exclude-ip', argv: withFlags(CNIBASE, { '-i': '127.0.0.0/8', '-x': '10.0.0.0/8' }) },
  { golden: 'include-exclude-ports', argv: withFlags(CNIBASE, { '-b': '1111,2222', '-d': '3333,4444,15020,15021,15090', '-o': '5555,6666' }) },
  { golden: 'tproxy', argv: withFlags(CNIBASE, { '-m': 'TPROXY' }) },
  { golden: 'dns', argv: [...CNIBASE, '--redirect-dns', '--capture-all-dns'] },
  { golden: 'invalid-drop', argv: [...CNIBASE, '--drop-invalid'] },
  { golden: 'custom-uid', argv: withFlags(CNIBASE, { '-u': '1000670000', '-g': '1000670001' }) },
  { golden: 'custom-uid-tproxy', argv: withFlags(CNIBASE, { '-m': 'TPROXY', '-u': '1000670000', '-g': '1000670001' }) },
];

import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { expectConfigError } from '../../helpers/errors.js';

/**
 * Bad input exits 2 with one stderr line that names the flag or env var and shows the value; nothing is
 * printed on stdout (no partial output).
 */
const BASE = ['-n', '--ipv6', 'off'];

interface BadCase {
  readonly name: string;
  readonly argv?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Text the message must hold: the field's name and the offending value. */
  readonly field: string;
  readonly value: string;
}

const BAD: readonly BadCase[] = [
  { name: 'port 0', argv: ['-p', '0'], field: '--envoy-port', value: '"0"' },
  { name: 'port 65536', argv: ['-z', '65536'], field: '--inbound-capture-port', value: '"65536"' },
  { name: 'port in exponent form', argv: ['-p', '1e3'], field: '--envoy-port', value: '"1e3"' },
  { name: 'negative port', argv: ['-e', '-1'], field: '--inbound-tunnel-port', value: '"-1"' },
  { name: 'port with a leading zero', argv: ['-p', '080'], field: '--envoy-port', value: '"080"' },
  { name: 'port with a space inside it', argv: ['-b', '80,4 43'], field: '--istio-inbound-ports', value: '"80,4 43"' },
  { name: 'port smuggling a target', argv: ['-b', '80 -j DROP'], field: '--istio-inbound-ports', value: '"80 -j DROP"' },
  { name: 'wildcard inside a port list', argv: ['-b', '*,80'], field: '--istio-inbound-ports', value: '"*,80"' },
  { name: 'exclude ports with garbage', argv: ['-d', '15090,abc'], field: '--istio-local-exclude-ports', value: '"15090,abc"' },
  { name: 'outbound exclude port 70000', argv: ['-o', '70000'], field: '--istio-local-outbound-ports-exclude', value: '"70000"' },
  { name: 'CIDR with garbage', argv: ['-i', '10.0.0.0/8garbage'], field: '--istio-service-cidr', value: '"10.0.0.0/8garbage"' },
  { name: 'CIDR smuggling an option', argv: ['-x', '10.0.0.0/8 --to-ports 1'], field: '--istio-service-exclude-cidr', value: '"10.0.0.0/8 --to-ports 1"' },
  { name: 'CIDR with a prefix too long', argv: ['-i', '10.0.0.0/33'], field: '--istio-service-cidr', value: '"10.0.0.0/33"' },
  { name: 'bare address where a CIDR is needed', argv: ['-i', '10.0.0.1'], field: '--istio-service-cidr', value: '"10.0.0.1"' },
  { name: 'octal-looking IPv4 octet', argv: ['-i', '010.0.0.0/8'], field: '--istio-service-cidr', value: '"010.0.0.0/8"' },
  { name: 'IPv6 CIDR with a zone', argv: ['-x', 'fe80::1%eth0/64'], field: '--istio-service-exclude-cidr', value: '"fe80::1%eth0/64"' },
  { name: 'excluding "*"', argv: ['-x', '*'], field: '--istio-service-exclude-cidr', value: '"*"' },
  { name: 'interface with a space', argv: ['-c', 'eth 0'], field: '--istio-exclude-interfaces', value: '"eth 0"' },
  { name: 'interface with a newline smuggling a rule', argv: ['-c', 'eth0\n-A OUTPUT -j ACCEPT'], field: '--istio-exclude-interfaces', value: '"eth0\\n-A OUTPUT -j ACCEPT"' },
  { name: 'interface longer than 15 bytes', argv: ['-k', 'averyveryverylongif'], field: '--kube-virt-interfaces', value: '"averyveryverylongif"' },
  { name: 'interface with a slash', argv: ['-c', 'eth/0'], field: '--istio-exclude-interfaces', value: '"eth/0"' },
  { name: 'interface with a colon', argv: ['-c', 'eth0:1'], field: '--istio-exclude-interfaces', value: '"eth0:1"' },
  { name: 'interface that reads as an option', argv: ['-c', '-A'], field: '--istio-exclude-interfaces', value: '"-A"' },
  { name: 'interface with "!"', argv: ['-k', '!eth0'], field: '--kube-virt-interfaces', value: '"!eth0"' },
  { name: 'uid 2^32-1', argv: ['-u', '4294967295'], field: '--proxy-uid', value: '"4294967295"' },
  { name: 'uid given as a name', argv: ['-u', 'istio-proxy'], field: '--proxy-uid', value: '"istio-proxy"' },
  { name: 'negative gid', argv: ['-g', '-5'], field: '--proxy-gid', value: '"-5"' },
  { name: 'unknown interception mode', argv: ['-m', 'tproxy'], field: '--istio-inbound-interception-mode', value: '"tproxy"' },
  { name: 'mark that is not a number', argv: ['-t', '0x539'], field: '--istio-inbound-tproxy-mark', value: '"0x539"' },
  { name: 'mark equal to the outbound mark', argv: ['-t', '1338'], field: '--istio-inbound-tproxy-mark', value: '"1338"' },
  { name: 'the main route table', argv: ['-r', '254'], field: '--istio-inbound-tproxy-route-table', value: '"254"' },
  { name: 'route table 0', argv: ['-r', '0'], field: '--istio-inbound-tproxy-route-table', value: '"0"' },
  { name: 'bool flag with a bad value', argv: ['--redirect-dns=yes'], field: '--redirect-dns', value: '"yes"' },
  { name: 'bool env var with a bad value (Istio ignores it)', env: { INVALID_DROP: 'yes' }, field: 'env INVALID_DROP', value: '"yes"' },
  { name: 'unknown backend', argv: ['--force-iptables-binary', 'iptables'], field: '--force-iptables-binary', value: '"iptables"' },
  { name: 'unknown ipv6 mode', argv: ['--ipv6', 'maybe'], field: '--ipv6', value: '"maybe"' },
  { name: 'unknown dry-run format', argv: ['--dry-run-format', 'json'], field: '--dry-run-format', value: '"json"' },
  { name: 'DNS server that is not an address', argv: ['--dns-servers', '1.2.3'], field: '--dns-servers', value: '"1.2.3"' },
  { name: 'relative netns path', argv: ['--netns', 'run/netns/x'], field: '--netns', value: '"run/netns/x"' },
  { name: 'bad probe timeout', argv: ['--probe-timeout', '5'], field: '--probe-timeout', value: '"5"' },
  { name: 'native nftables bool with a bad value', argv: ['--native-nftables=yes'], field: '--native-nftables', value: '"yes"' },
  { name: 'native nftables with a group name nft cannot read', argv: ['--native-nftables', '--dry-run-format', 'istio'], env: { ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE: 'grp$' }, field: 'env ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', value: '"grp$"' },
  { name: 'owner group with a space', env: { ISTIO_OUTBOUND_OWNER_GROUPS: 'java, 202' }, field: 'env ISTIO_OUTBOUND_OWNER_GROUPS', value: '"java, 202"' },
  { name: 'empty owner group include list', env: { ISTIO_OUTBOUND_OWNER_GROUPS: ',' }, field: 'env ISTIO_OUTBOUND_OWNER_GROUPS', value: '","' },
  { name: 'more than 64 owner groups', env: { ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE: Array.from({ length: 65 }, (_, i) => String(i + 1)).join(',') }, field: 'env ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', value: '"1,2,3' },
  { name: 'loopback CIDR outside 127/8', env: { ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR: '10.0.0.1/32' }, field: 'env ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR', value: '"10.0.0.1/32"' },
  { name: 'loopback CIDR with a /7 mask', env: { ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR: '127.0.0.1/7' }, field: 'env ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR', value: '"127.0.0.1/7"' },
  { name: 'empty capture port from env', env: { INBOUND_CAPTURE_PORT: '' }, field: 'env INBOUND_CAPTURE_PORT', value: '""' },
  { name: 'port env var smuggling COMMIT', env: { ISTIO_INBOUND_PORTS: '*\nCOMMIT' }, field: 'env ISTIO_INBOUND_PORTS', value: '"*\\nCOMMIT"' },
  { name: 'Istio log level that does not exist', argv: ['--log_output_level', 'default:loud'], field: '--log_output_level', value: '"default:loud"' },
  { name: 'unknown flag', argv: ['--no-such-flag'], field: 'command line', value: 'unknown option' },
  { name: 'positional argument', argv: ['extra'], field: 'command line', value: 'extra' },
  { name: 'flag without its value', argv: ['-p'], field: 'command line', value: 'argument missing' },
];

describe('bad input', () => {
  it('has at least 25 distinct cases', () => {
    expect(new Set(BAD.map((b) => b.name)).size).toBeGreaterThanOrEqual(25);
  });

  it.each(BAD)('$name → exit 2, one line naming $field', async (c) => {
    expectConfigError(await runCli([...BASE, ...(c.argv ?? [])], { ...c.env }), c.field, c.value);
  });

  it('a group name that does not resolve is an error for save format, accepted for Istio framing', async () => {
    const env = { ISTIO_OUTBOUND_OWNER_GROUPS: 'nosuchgroup' };
    const save = await runCli(BASE, env);
    expect(save.code).toBe(2);
    expect(save.stderr).toContain('env ISTIO_OUTBOUND_OWNER_GROUPS="nosuchgroup"');
    const istio = await runCli([...BASE, '--dry-run-format', 'istio'], env);
    expect(istio.code).toBe(0);
    expect(istio.stdout).toContain('-m owner ! --gid-owner nosuchgroup -j RETURN');
  });
});

describe('bad ambient input', () => {
  it.each([
    [['ambient', '--inbound', 'tproxy2'], '--inbound', '"tproxy2"'],
    [['ambient', '--host-probe-snat', '2001:db8::1'], '--host-probe-snat', '"2001:db8::1"'],
    [['ambient', '--host-probe-snat-v6', '169.254.7.127'], '--host-probe-snat-v6', '"169.254.7.127"'],
    [['ambient', '--virtual-interfaces', 'eth0,eth 1'], '--virtual-interfaces', '"eth0,eth 1"'],
    [['ambient', '--outbound-port', '15006'], '--inbound-port', '"15006"'],
    [['ambient', '--pod-dns-capture', 'maybe'], '--pod-dns-capture', '"maybe"'],
    [['ambient', '--dns-port', '0'], '--dns-port', '"0"'],
    [['ambient-host', '--add-pod-ip', '198.51.100.7,1.2.3'], '--add-pod-ip', '"198.51.100.7,1.2.3"'],
    [['ambient-host', '--remove-pod-ip', '2001:db8::7'], '--remove-pod-ip', '"2001:db8::7"'],
    [['ambient', '--no-such-flag'], 'command line', 'unknown option'],
  ])('%j → exit 2 naming %s', async (argv, field, value) => {
    expectConfigError(await runCli([...argv, '-n', '--ipv6', 'off']), field, value);
  });
});

import { describe, expect, it } from 'vitest';
import { detectIpv6, parseResolvConf } from '../../../src/config/environment.js';
import { fakeHost, runCli } from '../../helpers/cli.js';
import { configFor } from '../../helpers/plan.js';

describe("Istio's input precedence: flag > alias env > env > default", () => {
  it('takes the env var when no flag is given', () => {
    expect(configFor([], { INBOUND_CAPTURE_PORT: '16006' }).inboundCapturePort).toBe(16006);
  });

  it('lets the flag beat the env var', () => {
    expect(configFor(['-z', '17006'], { INBOUND_CAPTURE_PORT: '16006' }).inboundCapturePort).toBe(17006);
  });

  it('lets the alias env var beat the primary one, and the flag beat both', () => {
    expect(configFor([], { REDIRECT_DNS: 'false', ISTIO_META_DNS_CAPTURE: 'true', CAPTURE_ALL_DNS: 'true' }).redirectDns).toBe(true);
    expect(configFor([], { REDIRECT_DNS: 'true', ISTIO_META_DNS_CAPTURE: 'false' }).redirectDns).toBe(false);
    expect(configFor(['--redirect-dns=false'], { ISTIO_META_DNS_CAPTURE: 'true' }).redirectDns).toBe(false);
    expect(configFor([], { DROP_INVALID: '0', INVALID_DROP: 'T' }).dropInvalid).toBe(true);
    expect(configFor([], { DUAL_STACK: 'false', ISTIO_DUAL_STACK: '1' }).dualStack).toBe(true);
  });

  it('reads no env var for --envoy-port, as Istio does not', () => {
    expect(configFor([], { ENVOY_PORT: '1234' }).envoyPort).toBe(15001);
  });

  it('accepts long, short and = forms, and Go bool spellings', () => {
    const cfg = configFor(['--envoy-port=15101', '-z15106', '--dry-run=t', '--drop-invalid', 'true'.slice(0, 0) || '--capture-all-dns=False']);
    expect([cfg.envoyPort, cfg.inboundCapturePort, cfg.dryRun, cfg.dropInvalid, cfg.captureAllDns]).toEqual([15101, 15106, true, true, false]);
  });

  it('lets an empty env var override a list default, as Istio does', () => {
    expect(configFor([], { ISTIO_OUTBOUND_OWNER_GROUPS: '*', ISTIO_INBOUND_PORTS: '' }).inboundPorts).toEqual([]);
  });

  it('drops empty list items but never trims', () => {
    expect(configFor(['-b', '6000,7000,', '-d', ',15090']).inboundPorts).toEqual([6000, 7000]);
  });

  it('defaults the proxy GIDs to the final proxy UIDs', () => {
    expect(configFor(['-u', '3,4']).proxyGids.map((g) => g.id)).toEqual([3, 4]);
  });
});

describe('host facts', () => {
  it('takes the default proxy uid from $ENVOY_USER in /etc/passwd, else 1337', async () => {
    const host = fakeHost({ files: { '/etc/passwd': 'root:x:0:0::/root:/bin/sh\nistio-proxy:x:1234:1234::/:/sbin/nologin\nenvoy:x:999:999::/:/bin/false\n' } });
    const dflt = await runCli(['-n', '--ipv6', 'off', '--dry-run-format', 'istio'], {}, host);
    expect(dflt.stdout).toContain('-m owner --uid-owner 1234 -j RETURN');
    expect(dflt.stdout).toContain('-m owner --gid-owner 1234 -j RETURN');
    const other = await runCli(['-n', '--ipv6', 'off', '--dry-run-format', 'istio'], { ENVOY_USER: 'envoy' }, host);
    expect(other.stdout).toContain('--uid-owner 999 ');
    const none = await runCli(['-n', '--ipv6', 'off', '--dry-run-format', 'istio'], { ENVOY_USER: 'nobody-here' }, host);
    expect(none.stdout).toContain('--uid-owner 1337 ');
  });

  it('resolves owner group names through /etc/group for the save format', async () => {
    const host = fakeHost({ files: { '/etc/group': 'java:x:4242:\nftp:x:21:\n' } });
    const res = await runCli(['-n', '--ipv6', 'off'], { ISTIO_OUTBOUND_OWNER_GROUPS: 'java,202' }, host);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('-A ISTIO_OUTPUT -m owner ! --gid-owner 4242 -m owner ! --gid-owner 202 -j RETURN');
  });

  it('reads nameservers from --resolv-conf when DNS capture needs them', async () => {
    const host = fakeHost({ files: { '/tmp/r.conf': 'search x\nnameserver 192.0.2.53\nnameserver bogus\n nameserver 2001:db8::53\noptions ndots:5\n' } });
    const res = await runCli(['-n', '--ipv6', 'on', '--redirect-dns', '--resolv-conf', '/tmp/r.conf', '--dry-run-format', 'istio'], {}, host);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('-A ISTIO_OUTPUT_DNS -p udp --dport 53 -d 192.0.2.53/32 -j REDIRECT --to-port 15053');
    expect(res.stdout).toContain('-A ISTIO_OUTPUT_DNS -p udp --dport 53 -d 2001:db8::53/128 -j REDIRECT --to-port 15053');
  });

  it('fails with exit 5 when DNS capture needs a resolv.conf that is missing', async () => {
    const res = await runCli(['-n', '--redirect-dns', '--resolv-conf', '/nonexistent/resolv.conf'], {});
    expect(res.code).toBe(5);
    expect(res.stderr).toContain('/nonexistent/resolv.conf');
  });

  it('--dns-servers overrides the resolv.conf', async () => {
    const res = await runCli(['-n', '--ipv6', 'off', '--redirect-dns', '--dns-servers', '198.51.100.53', '--resolv-conf', '/nonexistent'], {});
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('-d 198.51.100.53/32 -p udp -m udp --dport 53 -j REDIRECT --to-ports 15053');
  });

  it('parses resolv.conf nameserver lines only', () => {
    expect(parseResolvConf('nameserver 192.0.2.1\n#nameserver 192.0.2.2\nnameserver fe80::1%eth0\nnameserver 2001:db8::1\n').map((c) => c.text)).toEqual([
      '192.0.2.1/32',
      '2001:db8::1/128',
    ]);
  });
});

describe("IPv6 detection (Istio's, for --ipv6 auto)", () => {
  const a = (address: string, family: 'IPv4' | 'IPv6', internal = false) => ({ address, family, internal });
  it('is off on an IPv4 pod and on an IPv6-only pod it is on', () => {
    expect(detectIpv6([a('127.0.0.1', 'IPv4', true), a('192.0.2.10', 'IPv4')], false).enabled).toBe(false);
    expect(detectIpv6([a('::1', 'IPv6', true), a('fe80::1', 'IPv6'), a('2001:db8::10', 'IPv6')], false).enabled).toBe(true);
  });

  it('is off for a dual-stack pod unless --dual-stack, as in Istio', () => {
    const addrs = [a('2001:db8::10', 'IPv6'), a('192.0.2.10', 'IPv4')];
    expect(detectIpv6(addrs, false).enabled).toBe(false);
    expect(detectIpv6(addrs, true).enabled).toBe(true);
  });

  it('ignores link-local addresses and is off with no usable address', () => {
    expect(detectIpv6([a('fe80::1', 'IPv6'), a('169.254.1.1', 'IPv4')], false)).toMatchObject({ enabled: false });
  });

  it('is what --ipv6 auto uses', async () => {
    const host = fakeHost({ addresses: [a('2001:db8::10', 'IPv6')] });
    const res = await runCli(['-n'], {}, host);
    expect(res.stdout).toContain('# ip6tables-save');
  });
});

describe('parseIpAddrJson', () => {
  it('lists IPv4 addresses first and marks loopback', async () => {
    const { parseIpAddrJson } = await import('../../../src/config/host.js');
    const json = JSON.stringify([
      { ifname: 'lo', flags: ['LOOPBACK', 'UP'], addr_info: [{ family: 'inet', local: '127.0.0.1' }, { family: 'inet6', local: '::1' }] },
      { ifname: 'eth0', flags: ['UP'], addr_info: [{ family: 'inet6', local: '2001:db8::2' }, { family: 'inet', local: '192.0.2.2' }] },
    ]);
    expect(parseIpAddrJson(json)).toEqual([
      { address: '127.0.0.1', family: 'IPv4', internal: true },
      { address: '192.0.2.2', family: 'IPv4', internal: false },
      { address: '::1', family: 'IPv6', internal: true },
      { address: '2001:db8::2', family: 'IPv6', internal: false },
    ]);
  });
});

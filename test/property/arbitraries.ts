import fc from 'fast-check';

/** Random valid configs, as the option values (flag strings) the CLI and the CNI plugin feed the engine. */

const port = fc.integer({ min: 1, max: 65535 });
const ports = (max = 4) => fc.array(port, { maxLength: max }).map((p) => p.join(','));
const octet = fc.integer({ min: 0, max: 255 });
const v4cidr = fc.tuple(octet, octet, octet, octet, fc.integer({ min: 0, max: 32 })).map(([a, b, c, d, p]) => `${a}.${b}.${c}.${d}/${p}`);
const word = fc.integer({ min: 0, max: 0xffff }).map((w) => w.toString(16));
const v6cidr = fc.tuple(word, word, fc.integer({ min: 32, max: 128 })).map(([a, b, p]) => `2001:db8:${a}:${b}::/${p}`);
const v4host = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
const v6host = fc.tuple(word, word).map(([a, b]) => `2001:db8::${a}:${b}`);
const iface = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
const ifaces = fc.uniqueArray(iface, { maxLength: 3 }).map((l) => l.join(','));
const id = fc.integer({ min: 0, max: 4294967294 });
const ids = fc.uniqueArray(id, { minLength: 1, maxLength: 2 }).map((l) => l.join(','));
const bool = fc.boolean().map(String);

export interface Generated {
  readonly command: 'sidecar' | 'ambient';
  readonly flags: Record<string, string>;
}

export const sidecarConfig: fc.Arbitrary<Generated> = fc
  .record({
    envoyPort: port.map(String),
    inboundCapturePort: port.map(String),
    inboundTunnelPort: port.map(String),
    proxyUid: ids,
    proxyGid: fc.option(ids, { nil: '' }),
    interceptionMode: fc.constantFrom('', 'REDIRECT', 'TPROXY'),
    inboundPorts: fc.oneof(fc.constant('*'), ports(), fc.constant('')),
    inboundExcludePorts: ports(),
    excludeInterfaces: ifaces,
    outboundInclude: fc.oneof(fc.constant('*'), fc.constant(''), fc.array(fc.oneof(v4cidr, v6cidr), { maxLength: 3 }).map((l) => l.join(','))),
    outboundExclude: fc.array(fc.oneof(v4cidr, v6cidr), { maxLength: 3 }).map((l) => l.join(',')),
    outboundPorts: ports(),
    outboundExcludePorts: ports(),
    kubeVirtInterfaces: ifaces,
    tproxyMark: fc.integer({ min: 1, max: 0x7fffffff }).filter((m) => m !== 1338).map(String),
    tproxyRouteTable: fc.integer({ min: 1, max: 252 }).map(String),
    redirectDns: bool,
    captureAllDns: bool,
    dnsServers: fc.array(fc.oneof(v4host, v6host), { minLength: 1, maxLength: 2 }).map((l) => l.join(',')),
    dropInvalid: bool,
    ipv6: fc.constantFrom('on', 'off'),
  })
  .map((flags) => ({ command: 'sidecar' as const, flags: { ...flags, dryRun: 'true' } }));

export const ambientConfig: fc.Arbitrary<Generated> = fc
  .record({
    inbound: fc.constantFrom('tproxy', 'redirect'),
    redirectDns: bool,
    podDnsCapture: fc.constantFrom('', 'true', 'false'),
    ingressMode: bool,
    virtualInterfaces: ifaces,
    ports: fc.uniqueArray(port, { minLength: 4, maxLength: 4 }),
    hostProbeSnat: v4host,
    hostProbeSnatV6: v6host,
    ipv6: fc.constantFrom('on', 'off'),
  })
  .map(({ ports: [o, i, t, d], ...rest }) => ({
    command: 'ambient' as const,
    flags: { ...rest, outboundPort: String(o), inboundPort: String(i), tunnelPort: String(t), dnsPort: String(d), dryRun: 'true' },
  }));

export const anyConfig = fc.oneof(sidecarConfig, ambientConfig);

/** The seed of this run: MESHCAP_PROPERTY_SEED replays one; printed so a failure can be replayed. */
export const SEED = Number(process.env['MESHCAP_PROPERTY_SEED'] ?? Date.now() % 2 ** 31);
/** Scale: MESHCAP_PROPERTY_SCALE=10 runs ten times as many configs. */
export const SCALE = Number(process.env['MESHCAP_PROPERTY_SCALE'] ?? 1);

/** Chain names, ports, marks and other magic numbers, named once. Istio's spelling throughout. */
export const Chain = {
  inbound: 'ISTIO_INBOUND',
  inRedirect: 'ISTIO_IN_REDIRECT',
  output: 'ISTIO_OUTPUT',
  redirect: 'ISTIO_REDIRECT',
  outputDns: 'ISTIO_OUTPUT_DNS',
  divert: 'ISTIO_DIVERT',
  tproxy: 'ISTIO_TPROXY',
  drop: 'ISTIO_DROP',
} as const;

/** Every chain meshcap creates starts with this; nothing else is ours. */
export const OWNED_CHAIN_PREFIX = 'ISTIO_';

export const Port = {
  outbound: 15001,
  inbound: 15006,
  tunnel: 15008,
  dnsAgent: 15053,
  dns: 53,
  validationProbe: 15002,
} as const;

export const Mark = {
  /** Default TPROXY mark (`-t`). */
  tproxy: 1337,
  /** Hard-coded "outbound" mark of Istio's TPROXY mode. */
  tproxyOutbound: 1338,
  full: 0xffffffff,
} as const;

export const DEFAULT_PROXY_UID = 1337;
export const DEFAULT_TPROXY_ROUTE_TABLE = 133;
export const DEFAULT_ENVOY_USER = 'istio-proxy';

/** Conntrack zones of Istio's DNS split. */
export const DnsZone = { agentUpstream: 1, appAgent: 2 } as const;

export const Loopback = {
  ipv4: '127.0.0.1/32',
  ipv6: '::1/128',
} as const;

/** The source address Envoy uses for inbound passthrough (Istio 1.10+). */
export const PassthroughSource = {
  ipv4: '127.0.0.6/32',
  ipv6: '::6/128',
} as const;

/** Istio ambient's chains, marks and numbers (istio-ambient-cni.md §1). */
export const AmbientChain = {
  prerouting: 'ISTIO_PRERT',
  output: 'ISTIO_OUTPUT',
  postrouting: 'ISTIO_POSTRT',
} as const;

export const AmbientMark = {
  /** The mark ztunnel puts on its own sockets (SO_MARK), matched as 0x539/0xfff. */
  ztunnel: 0x539,
  /** The connmark/fwmark of connections that belong to ztunnel. */
  connection: 0x111,
  mask: 0xfff,
} as const;

export const AmbientRouting = { table: 100, priority: 32764 } as const;

export const PROBE_IPSET = { ipv4: 'istio-inpod-probes-v4', ipv6: 'istio-inpod-probes-v6' } as const;

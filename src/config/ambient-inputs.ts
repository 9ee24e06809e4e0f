import type { InputSpec } from './sources.js';

const I = <K extends string>(spec: InputSpec<K>) => spec;

/** Defaults of Istio's node agent (istio-ambient-cni.md §1). */
export const AMBIENT_DEFAULTS = {
  hostProbeSnat: '169.254.7.127',
  hostProbeSnatV6: 'fd16:9254:7127:1337:ffff:ffff:ffff:ffff',
} as const;

/** Inputs every ambient command takes (in-pod and node side). */
const COMMON = [
  I({ key: 'netns', long: 'netns', kind: 'string', default: '', arg: 'path', help: 'network namespace to work in (default: the current one)' }),
  I({ key: 'ipv6', long: 'ipv6', kind: 'string', default: 'auto', arg: 'mode', help: 'auto (on if the namespace has an IPv6 address), on or off' }),
  I({ key: 'hostProbeSnat', long: 'host-probe-snat', env: 'HOST_PROBE_SNAT_IP', kind: 'string', default: AMBIENT_DEFAULTS.hostProbeSnat, arg: 'ipv4', help: 'the kubelet probe SNAT address' }),
  I({ key: 'hostProbeSnatV6', long: 'host-probe-snat-v6', env: 'HOST_PROBE_SNAT_IPV6', kind: 'string', default: AMBIENT_DEFAULTS.hostProbeSnatV6, arg: 'ipv6', help: 'the kubelet probe SNAT address for IPv6' }),
  I({ key: 'dryRun', long: 'dry-run', short: 'n', kind: 'bool', default: 'false', help: 'print the rules, change nothing' }),
  I({ key: 'dryRunFormat', long: 'dry-run-format', kind: 'string', default: 'save', arg: 'format', help: "save (iptables-save output) or istio (Istio's framing)" }),
  I({ key: 'cleanupOnly', long: 'cleanup-only', kind: 'bool', default: 'false', help: 'remove the rules (and routes, ipsets) this config creates' }),
  I({ key: 'forceIptablesBinary', long: 'force-iptables-binary', env: 'FORCE_IPTABLES_BINARY', kind: 'string', default: '', arg: 'backend', help: 'legacy or nft, skipping detection' }),
  I({ key: 'nativeNftables', long: 'native-nftables', env: 'NATIVE_NFTABLES', kind: 'bool', default: 'false', help: 'native nftables: inet istio-ambient-* tables in one nft transaction (docs/nftables.md)' }),
  I({ key: 'logFormat', long: 'log-format', kind: 'string', default: 'json', arg: 'format', help: 'json or pretty' }),
  I({ key: 'logOutputLevel', long: 'log_output_level', kind: 'string', default: 'default:info', arg: 'levels', help: 'Istio log levels, scope:level,...' }),
] as const;

/** `meshcap ambient`: ztunnel's in-pod redirection. */
export const AMBIENT_INPUTS = [
  ...COMMON,
  I({ key: 'inbound', long: 'inbound', kind: 'string', default: 'tproxy', arg: 'layout', help: 'tproxy (Istio ≤ 1.24 layout) or redirect (Istio ≥ 1.25)' }),
  I({ key: 'redirectDns', long: 'redirect-dns', env: 'AMBIENT_DNS_CAPTURE', kind: 'bool', default: 'false', help: 'capture DNS to ztunnel (the global setting)' }),
  I({ key: 'podDnsCapture', long: 'pod-dns-capture', kind: 'string', default: '', arg: 'bool', help: 'the pod annotation ambient.istio.io/dns-capture (overrides --redirect-dns)' }),
  I({ key: 'ingressMode', long: 'ingress-mode', kind: 'bool', default: 'false', help: 'bypass inbound capture (ambient.istio.io/bypass-inbound-capture)' }),
  I({ key: 'virtualInterfaces', long: 'virtual-interfaces', kind: 'string', default: '', arg: 'ifaces', help: 'interfaces whose inbound traffic is treated as outbound' }),
  I({ key: 'outboundPort', long: 'outbound-port', kind: 'string', default: '15001', arg: 'port', help: 'ztunnel outbound port' }),
  I({ key: 'inboundPort', long: 'inbound-port', kind: 'string', default: '15006', arg: 'port', help: 'ztunnel inbound plaintext port' }),
  I({ key: 'tunnelPort', long: 'tunnel-port', kind: 'string', default: '15008', arg: 'port', help: 'ztunnel HBONE port' }),
  I({ key: 'dnsPort', long: 'dns-port', kind: 'string', default: '15053', arg: 'port', help: 'ztunnel DNS proxy port' }),
  I({ key: 'reconcile', long: 'reconcile', kind: 'bool', default: 'false', help: 'replace a different set of our rules atomically' }),
] as const;

/** `meshcap ambient-host`: the node-side probe SNAT rules and their ipsets. */
export const AMBIENT_HOST_INPUTS = [
  ...COMMON,
  I({ key: 'addPodIp', long: 'add-pod-ip', kind: 'string', default: '', arg: 'ips', help: 'add pod IPs to the probe ipset' }),
  I({ key: 'removePodIp', long: 'remove-pod-ip', kind: 'string', default: '', arg: 'ips', help: 'remove pod IPs from the probe ipset' }),
  I({ key: 'kubeletUid', long: 'kubelet-uid', kind: 'string', default: '', arg: 'uid', help: "with --native-nftables: the kubelet's UID (default: found in /proc)" }),
] as const;

import type { InputSpec } from './sources.js';

/**
 * Every input of sidecar mode: istio-iptables' flags (istio-sidecar.md §2) with their env vars, its env-only
 * inputs, Istio's logging flags, and meshcap's additions. One table drives commander, env binding and help.
 */
const I = <K extends string>(spec: InputSpec<K>) => spec;

export const SIDECAR_INPUTS = [
  I({ key: 'envoyPort', long: 'envoy-port', short: 'p', kind: 'string', default: '15001', arg: 'port', help: 'outbound capture port (Envoy)' }),
  I({ key: 'inboundCapturePort', long: 'inbound-capture-port', short: 'z', env: 'INBOUND_CAPTURE_PORT', kind: 'string', default: '15006', arg: 'port', help: 'inbound capture port' }),
  I({ key: 'inboundTunnelPort', long: 'inbound-tunnel-port', short: 'e', env: 'INBOUND_TUNNEL_PORT', kind: 'string', default: '15008', arg: 'port', help: 'HBONE tunnel port, never captured inbound' }),
  I({ key: 'proxyUid', long: 'proxy-uid', short: 'u', env: 'PROXY_UID', kind: 'string', default: '', arg: 'uids', help: 'UIDs whose traffic is not captured (default: uid of $ENVOY_USER, else 1337)' }),
  I({ key: 'proxyGid', long: 'proxy-gid', short: 'g', env: 'PROXY_GID', kind: 'string', default: '', arg: 'gids', help: 'GIDs whose traffic is not captured (default: the proxy UIDs)' }),
  I({ key: 'interceptionMode', long: 'istio-inbound-interception-mode', short: 'm', env: 'ISTIO_INBOUND_INTERCEPTION_MODE', kind: 'string', default: '', arg: 'mode', help: 'REDIRECT or TPROXY ("" = REDIRECT)' }),
  I({ key: 'inboundPorts', long: 'istio-inbound-ports', short: 'b', env: 'ISTIO_INBOUND_PORTS', kind: 'string', default: '', arg: 'ports', help: 'inbound ports to capture: "*" = all, "" = none' }),
  I({ key: 'inboundExcludePorts', long: 'istio-local-exclude-ports', short: 'd', env: 'ISTIO_LOCAL_EXCLUDE_PORTS', kind: 'string', default: '', arg: 'ports', help: 'inbound ports not captured (only with -b "*")' }),
  I({ key: 'excludeInterfaces', long: 'istio-exclude-interfaces', short: 'c', env: 'ISTIO_EXCLUDE_INTERFACES', kind: 'string', default: '', arg: 'ifaces', help: 'interfaces never captured' }),
  I({ key: 'outboundInclude', long: 'istio-service-cidr', short: 'i', env: 'ISTIO_SERVICE_CIDR', kind: 'string', default: '', arg: 'cidrs', help: 'outbound CIDRs to capture: "*" = all, "" = none' }),
  I({ key: 'outboundExclude', long: 'istio-service-exclude-cidr', short: 'x', env: 'ISTIO_SERVICE_EXCLUDE_CIDR', kind: 'string', default: '', arg: 'cidrs', help: 'outbound CIDRs never captured' }),
  I({ key: 'outboundPorts', long: 'istio-outbound-ports', short: 'q', env: 'ISTIO_OUTBOUND_PORTS', kind: 'string', default: '', arg: 'ports', help: 'outbound ports always captured' }),
  I({ key: 'outboundExcludePorts', long: 'istio-local-outbound-ports-exclude', short: 'o', env: 'ISTIO_LOCAL_OUTBOUND_PORTS_EXCLUDE', kind: 'string', default: '', arg: 'ports', help: 'outbound ports (tcp and udp) never captured' }),
  I({ key: 'kubeVirtInterfaces', long: 'kube-virt-interfaces', short: 'k', env: 'KUBE_VIRT_INTERFACES', kind: 'string', default: '', arg: 'ifaces', help: 'virtual interfaces whose inbound traffic is treated as outbound' }),
  I({ key: 'tproxyMark', long: 'istio-inbound-tproxy-mark', short: 't', env: 'ISTIO_INBOUND_TPROXY_MARK', kind: 'string', default: '1337', arg: 'mark', help: 'TPROXY packet mark' }),
  I({ key: 'tproxyRouteTable', long: 'istio-inbound-tproxy-route-table', short: 'r', env: 'ISTIO_INBOUND_TPROXY_ROUTE_TABLE', kind: 'string', default: '133', arg: 'table', help: 'TPROXY policy-routing table' }),
  I({ key: 'dryRun', long: 'dry-run', short: 'n', env: 'DRY_RUN', kind: 'bool', default: 'false', help: 'print the rules, change nothing' }),
  I({ key: 'iptablesProbePort', long: 'iptables-probe-port', env: 'IPTABLES_PROBE_PORT', kind: 'string', default: '15002', arg: 'port', help: 'validation: original destination port of the probe' }),
  I({ key: 'probeTimeout', long: 'probe-timeout', env: 'PROBE_TIMEOUT', kind: 'string', default: '5s', arg: 'duration', help: 'validation timeout' }),
  I({ key: 'skipRuleApply', long: 'skip-rule-apply', env: 'SKIP_RULE_APPLY', kind: 'bool', default: 'false', help: 'do not apply rules (with --run-validation)' }),
  I({ key: 'runValidation', long: 'run-validation', env: 'RUN_VALIDATION', kind: 'bool', default: 'false', help: 'check that the redirect works; exit 126 if not' }),
  I({ key: 'redirectDns', long: 'redirect-dns', env: 'REDIRECT_DNS', aliasEnv: 'ISTIO_META_DNS_CAPTURE', kind: 'bool', default: 'false', help: 'capture DNS to the agent on 15053' }),
  I({ key: 'dropInvalid', long: 'drop-invalid', env: 'DROP_INVALID', aliasEnv: 'INVALID_DROP', kind: 'bool', default: 'false', help: 'drop conntrack-INVALID packets' }),
  I({ key: 'dualStack', long: 'dual-stack', env: 'DUAL_STACK', aliasEnv: 'ISTIO_DUAL_STACK', kind: 'bool', default: 'false', help: 'with --ipv6 auto: IPv6 on if any address is IPv6' }),
  I({ key: 'captureAllDns', long: 'capture-all-dns', env: 'CAPTURE_ALL_DNS', kind: 'bool', default: 'false', help: 'capture all port-53 traffic, not only to the nameservers' }),
  I({ key: 'networkNamespace', long: 'network-namespace', env: 'NETWORK_NAMESPACE', kind: 'string', default: '', arg: 'path', help: 'Istio compatibility; use --netns to run in a namespace' }),
  I({ key: 'cniMode', long: 'cni-mode', env: 'CNI_MODE', kind: 'bool', default: 'false', help: 'Istio compatibility (per-namespace lock)' }),
  I({ key: 'reconcile', long: 'reconcile', env: 'RECONCILE', kind: 'bool', default: 'false', help: 'replace a different set of our rules atomically' }),
  I({ key: 'cleanupOnly', long: 'cleanup-only', env: 'CLEANUP_ONLY', kind: 'bool', default: 'false', help: 'remove the rules this config would create' }),
  I({ key: 'forceApply', long: 'force-apply', env: 'FORCE_APPLY', kind: 'bool', default: 'false', help: 'apply even when the state already matches' }),
  I({ key: 'nativeNftables', long: 'native-nftables', env: 'NATIVE_NFTABLES', kind: 'bool', default: 'false', help: 'native nftables: inet istio-proxy-* tables in one nft transaction (docs/nftables.md)' }),
  I({ key: 'forceIptablesBinary', long: 'force-iptables-binary', env: 'FORCE_IPTABLES_BINARY', kind: 'string', default: '', arg: 'backend', help: 'legacy or nft, skipping detection' }),
  // env-only inputs
  I({ key: 'ownerGroupsInclude', env: 'ISTIO_OUTBOUND_OWNER_GROUPS', kind: 'string', default: '*', help: 'groups whose outbound traffic is captured' }),
  I({ key: 'ownerGroupsExclude', env: 'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', kind: 'string', default: '', help: 'groups whose outbound traffic is not captured' }),
  I({ key: 'ipv4LoopbackCidr', env: 'ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR', kind: 'string', default: '127.0.0.1/32', help: 'IPv4 localhost CIDR' }),
  I({ key: 'envoyUser', env: 'ENVOY_USER', kind: 'string', default: 'istio-proxy', help: 'user whose uid is the default --proxy-uid' }),
  I({ key: 'dryRunFilePath', env: 'DRY_RUN_FILE_PATH', kind: 'string', default: '', help: 'dry-run: also write Istio\'s framing to this file' }),
  // Istio's logging flags
  I({ key: 'logOutputLevel', long: 'log_output_level', kind: 'string', default: 'default:info', arg: 'levels', help: 'Istio log levels, scope:level,... (debug, info, warn, error, none)' }),
  I({ key: 'logAsJson', long: 'log_as_json', kind: 'bool', default: 'false', help: 'accepted; meshcap logs JSON unless --log-format pretty' }),
  // meshcap's additions
  I({ key: 'ipv6', long: 'ipv6', kind: 'string', default: 'auto', arg: 'mode', help: 'auto (Istio detection), on or off' }),
  I({ key: 'dnsServers', long: 'dns-servers', kind: 'string', default: '', arg: 'ips', help: 'nameservers for DNS capture (overrides --resolv-conf)' }),
  I({ key: 'resolvConf', long: 'resolv-conf', kind: 'string', default: '/etc/resolv.conf', arg: 'path', help: 'where nameservers are read (/dev/null = none)' }),
  I({ key: 'netns', long: 'netns', kind: 'string', default: '', arg: 'path', help: 'network namespace to work in (default: the current one)' }),
  I({ key: 'dryRunFormat', long: 'dry-run-format', kind: 'string', default: 'save', arg: 'format', help: 'save (iptables-save output) or istio (Istio\'s dry-run framing)' }),
  I({ key: 'logFormat', long: 'log-format', kind: 'string', default: 'json', arg: 'format', help: 'json or pretty' }),
] as const;

export type SidecarInputKey = (typeof SIDECAR_INPUTS)[number]['key'];

/** Istio logging flags that meshcap accepts and ignores, so istio-init command lines keep working. */
export const IGNORED_ISTIO_LOG_FLAGS = [
  'log_caller', 'log_stacktrace_level', 'log_target', 'log_rotate', 'log_rotate_max_age', 'log_rotate_max_backups', 'log_rotate_max_size',
] as const;

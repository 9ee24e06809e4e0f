import * as z from 'zod/mini';
import { bypassPolicySchema } from '../config/bypass-policy.js';

/**
 * meshcap-cni's conflist entry: the one schema of the plugin's config, read by the plugin at every call, by
 * the installer before it writes the entry, and by the node agent and node-status from the node's conflist.
 */

const list = z.union([z.string(), z.pipe(z.array(z.string()), z.transform((a: string[]) => a.join(',')))]);
const id = z.union([z.pipe(z.int(), z.transform(String)), z.string()]);
const opt = z.optional;
const dflt = z._default;

/**
 * The plugin's conflist entry. Unknown fields are refused (code 2, naming the field); values are checked
 * again by the same schema the CLI uses once they become options.
 */
export const netConfSchema = z.strictObject({
  cniVersion: z.string(),
  name: opt(z.string()),
  type: opt(z.string()),
  args: opt(z.record(z.string(), z.unknown())),
  ipMasq: opt(z.boolean()),
  ipam: opt(z.record(z.string(), z.unknown())),
  dns: opt(z.record(z.string(), z.unknown())),
  capabilities: opt(z.record(z.string(), z.boolean())),
  // containerd passes `null` for a pod without annotations (= no annotations).
  runtimeConfig: opt(z.looseObject({ 'io.kubernetes.cri.pod-annotations': opt(z.nullable(z.record(z.string(), z.string()))) })),
  prevResult: opt(z.record(z.string(), z.unknown())),
  'cni.dev/valid-attachments': opt(z.array(z.object({ containerID: z.string(), ifname: z.string() }))),
  mode: dflt(z.enum(['sidecar', 'ambient']), 'sidecar'),
  log_level: dflt(z.enum(['debug', 'info', 'warn', 'error']), 'info'),
  log_file: opt(z.string()),
  exclude_namespaces: dflt(z.array(z.string()), ['kube-system']),
  /** Which capture-narrowing annotations pods may not carry, outside the allowed namespaces (docs/cni.md). */
  bypass_policy: opt(bypassPolicySchema),
  ipv6: dflt(z.enum(['auto', 'on', 'off']), 'auto'),
  force_iptables_binary: opt(z.enum(['legacy', 'nft'])),
  native_nftables: dflt(z.boolean(), false),
  redirect_dns: dflt(z.boolean(), false),
  // sidecar, istio-cni's defaults (CASES.md §4)
  proxy_uid: dflt(id, '1337'),
  proxy_gid: opt(id),
  interception_mode: dflt(z.string(), 'REDIRECT'),
  include_outbound_ip_ranges: dflt(list, '*'),
  exclude_outbound_ip_ranges: dflt(list, ''),
  include_inbound_ports: dflt(list, '*'),
  exclude_inbound_ports: dflt(list, ''),
  include_outbound_ports: dflt(list, ''),
  exclude_outbound_ports: dflt(list, '15020'),
  exclude_interfaces: dflt(list, ''),
  kube_virt_interfaces: dflt(list, ''),
  drop_invalid: dflt(z.boolean(), false),
  // ambient
  // tproxy (Istio ≤ 1.24 layout) by default; native nftables has only redirect, its default there.
  inbound: opt(z.string()),
  ingress_mode: dflt(z.boolean(), false),
  virtual_interfaces: dflt(list, ''),
  host_probe_snat: opt(z.string()),
  host_probe_snat_v6: opt(z.string()),
  probe_ipset: dflt(z.boolean(), false),
  /** With native_nftables: the kubelet's UID for the node's probe SNAT (default: found in /proc). */
  kubelet_uid: opt(id),
});
export type NetConf = z.output<typeof netConfSchema>;

/**
 * `log_file` must be an absolute path (the runtime's working directory is not ours). Not in the schema: DEL
 * reads its config leniently and only drops a bad log_file, where ADD and the installer refuse it.
 */
export function hasRelativeLogFile(conf: Pick<NetConf, 'log_file'>): boolean {
  return conf.log_file !== undefined && !conf.log_file.startsWith('/');
}


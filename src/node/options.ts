import { SIDECAR_INPUTS } from '../config/sidecar-inputs.js';
import { AMBIENT_HOST_INPUTS, AMBIENT_INPUTS } from '../config/ambient-inputs.js';
import type { InputSpec } from '../config/sources.js';
import type { CommandName } from '../commands/load.js';
import { splitList } from '../config/values.js';
import { Annotation } from '../config/annotations.js';
import { formatAnnotationRefusal, readPodAnnotations, type AnnotationReading } from '../config/annotation-grammar.js';
import { AnnotationError, type ConfigError } from '../errors.js';
import type { NetConf } from './plugin-config.js';

/** The annotation names live in src/config/annotations.ts (meshcap lint checks the same ones). */
export { Annotation };

/** Ports istio-cni always adds to the inbound exclusions: the agent, health and Prometheus ports. */
const ALWAYS_EXCLUDED_INBOUND = '15020,15021,15090';

/** Options for one engine command, and where each value came from (for error messages). */
export interface PluginOptions {
  readonly command: CommandName;
  readonly flags: Record<string, string>;
  readonly origin: ReadonlyMap<string, string>;
  /** Annotations ignored as Istio ignores them (a boolean that does not parse), for the log. */
  readonly warnings: readonly string[];
}

function dedupe(csv: string): string {
  return [...new Set(splitList(csv))].join(',');
}

class Builder {
  readonly flags: Record<string, string> = {};
  readonly origin = new Map<string, string>();
  readonly warnings: readonly string[];
  private readonly reading: AnnotationReading;
  /** Reads the pod's annotations through the one grammar table; a refused value fails ADD naming it as the pod carries it. */
  constructor(mode: 'sidecar' | 'ambient' | undefined, annotations: Readonly<Record<string, string>>) {
    this.reading = mode === undefined ? { options: new Map(), warnings: [], refusal: undefined } : readPodAnnotations(mode, annotations);
    const bad = this.reading.refusal;
    if (bad !== undefined) throw new AnnotationError(formatAnnotationRefusal(bad.name, bad.value, bad.reason));
    this.warnings = this.reading.warnings;
  }
  /** Sets an option from the config field, or from the pod's annotation (read by the grammar table) when it has one. */
  set(key: string, confField: string, confValue: string, transform: (v: string) => string = (v) => v): void {
    const fromAnn = this.reading.options.get(key);
    this.flags[key] = transform(fromAnn?.text ?? confValue);
    this.origin.set(key, fromAnn !== undefined ? `annotation ${fromAnn.annotation}` : `config field ${confField}`);
  }
  fixed(key: string, value: string, why: string): void {
    this.flags[key] = value;
    this.origin.set(key, why);
  }
}

/** istio-cni's sidecar defaults and annotations (CASES.md §4; src/config/annotation-grammar.ts) as meshcap sidecar options. */
export function sidecarOptions(conf: NetConf, annotations: Readonly<Record<string, string>>): Builder {
  const b = new Builder('sidecar', annotations);
  b.fixed('envoyPort', '15001', 'istio-cni default');
  b.fixed('inboundCapturePort', '15006', 'istio-cni default');
  b.set('proxyUid', 'proxy_uid', conf.proxy_uid);
  b.set('proxyGid', conf.proxy_gid === undefined ? 'proxy_uid' : 'proxy_gid', conf.proxy_gid ?? conf.proxy_uid);
  b.set('interceptionMode', 'interception_mode', conf.interception_mode);
  b.set('outboundInclude', 'include_outbound_ip_ranges', conf.include_outbound_ip_ranges);
  b.set('outboundExclude', 'exclude_outbound_ip_ranges', conf.exclude_outbound_ip_ranges);
  b.set('inboundPorts', 'include_inbound_ports', conf.include_inbound_ports);
  b.set('inboundExcludePorts', 'exclude_inbound_ports', conf.exclude_inbound_ports, (v) => dedupe(`${v},${ALWAYS_EXCLUDED_INBOUND}`));
  b.set('outboundPorts', 'include_outbound_ports', conf.include_outbound_ports);
  b.set('outboundExcludePorts', 'exclude_outbound_ports', conf.exclude_outbound_ports);
  b.set('excludeInterfaces', 'exclude_interfaces', conf.exclude_interfaces);
  b.set('kubeVirtInterfaces', 'kube_virt_interfaces', conf.kube_virt_interfaces);
  b.set('redirectDns', 'redirect_dns', String(conf.redirect_dns));
  b.set('captureAllDns', 'redirect_dns', String(conf.redirect_dns));
  b.set('dropInvalid', 'drop_invalid', String(conf.drop_invalid));
  return b;
}

export function ambientOptions(conf: NetConf, annotations: Readonly<Record<string, string>>): Builder {
  const b = new Builder('ambient', annotations);
  b.set('inbound', 'inbound', conf.inbound ?? (conf.native_nftables ? 'redirect' : 'tproxy'));
  b.set('redirectDns', 'redirect_dns', String(conf.redirect_dns));
  b.set('podDnsCapture', 'redirect_dns', '');
  b.set('ingressMode', 'ingress_mode', String(conf.ingress_mode));
  b.set('virtualInterfaces', 'virtual_interfaces', conf.virtual_interfaces);
  addProbeAddresses(b, conf);
  return b;
}

function addProbeAddresses(b: Builder, conf: NetConf): void {
  if (conf.host_probe_snat !== undefined) b.set('hostProbeSnat', 'host_probe_snat', conf.host_probe_snat);
  if (conf.host_probe_snat_v6 !== undefined) b.set('hostProbeSnatV6', 'host_probe_snat_v6', conf.host_probe_snat_v6);
}

/** The node-side options for keeping the probe ipset in step. */
export function hostOptions(conf: NetConf): Builder {
  const b = new Builder(undefined, {});
  addProbeAddresses(b, conf);
  if (conf.kubelet_uid !== undefined) b.set('kubeletUid', 'kubelet_uid', conf.kubelet_uid);
  return b;
}

/** Options every command gets from the plugin: the namespace, IPv6, backend, converge, logging. */
export function finish(b: Builder, command: CommandName, conf: NetConf, netns: string | undefined): PluginOptions {
  if (netns !== undefined) b.fixed('netns', netns, 'CNI_NETNS');
  b.set('ipv6', 'ipv6', conf.ipv6);
  if (conf.force_iptables_binary !== undefined) b.set('forceIptablesBinary', 'force_iptables_binary', conf.force_iptables_binary);
  if (conf.native_nftables) b.set('nativeNftables', 'native_nftables', 'true');
  // Native nftables always converges; iptables mode needs --reconcile for that.
  if (command !== 'ambient-host' && !conf.native_nftables) b.fixed('reconcile', 'true', 'meshcap-cni');
  return { command, flags: b.flags, origin: b.origin, warnings: b.warnings };
}

/** Maps a CLI option name in a ConfigError (`--istio-service-cidr`) back to where the plugin got its value. */
export function originOf(opts: PluginOptions, field: string): string {
  const tables: Record<CommandName, readonly InputSpec[]> = { sidecar: SIDECAR_INPUTS, ambient: AMBIENT_INPUTS, 'ambient-host': AMBIENT_HOST_INPUTS };
  const spec = tables[opts.command].find((s) => `--${s.long}` === field);
  return (spec && opts.origin.get(spec.key)) ?? field;
}

/** A ConfigError's message naming the config field or annotation the value came from (CNI error, agent report). */
export function messageWithOrigin(err: ConfigError, opts: PluginOptions): string {
  return err.message.replace(err.field, originOf(opts, err.field));
}

/**
 * Istio's annotations (istio/api annotation/annotations.yaml, names only) and whether each one belongs on a
 * Pod — where the injector and the CNI plugin read it. A Pod annotation anywhere else is ignored.
 */
const POD = [
  'sidecar.istio.io/inject', 'sidecar.istio.io/status', 'sidecar.istio.io/rewriteAppHTTPProbers',
  'sidecar.istio.io/controlPlaneAuthPolicy', 'sidecar.istio.io/discoveryAddress', 'sidecar.istio.io/proxyImage',
  'sidecar.istio.io/proxyImageType', 'sidecar.istio.io/proxyCPU', 'sidecar.istio.io/proxyCPULimit',
  'sidecar.istio.io/proxyMemory', 'sidecar.istio.io/proxyMemoryLimit', 'sidecar.istio.io/interceptionMode',
  'sidecar.istio.io/bootstrapOverride', 'sidecar.istio.io/statsInclusionPrefixes', 'sidecar.istio.io/statsInclusionSuffixes',
  'sidecar.istio.io/statsInclusionRegexps', 'sidecar.istio.io/statsHistogramBuckets', 'sidecar.istio.io/statsCompression',
  'sidecar.istio.io/userVolume', 'sidecar.istio.io/userVolumeMount', 'sidecar.istio.io/enableCoreDump',
  'sidecar.istio.io/logLevel', 'sidecar.istio.io/componentLogLevel', 'sidecar.istio.io/agentLogLevel',
  'sidecar.istio.io/extraStatTags', 'sidecar.istio.io/nativeSidecar',
  'status.sidecar.istio.io/port',
  'readiness.status.sidecar.istio.io/initialDelaySeconds', 'readiness.status.sidecar.istio.io/periodSeconds',
  'readiness.status.sidecar.istio.io/failureThreshold', 'readiness.status.sidecar.istio.io/applicationPorts',
  'traffic.sidecar.istio.io/includeOutboundIPRanges', 'traffic.sidecar.istio.io/excludeOutboundIPRanges',
  'traffic.sidecar.istio.io/includeInboundPorts', 'traffic.sidecar.istio.io/excludeInboundPorts',
  'traffic.sidecar.istio.io/includeOutboundPorts', 'traffic.sidecar.istio.io/excludeOutboundPorts',
  'traffic.sidecar.istio.io/kubevirtInterfaces', 'traffic.sidecar.istio.io/excludeInterfaces',
  'istio.io/reroute-virtual-interfaces',
  'prometheus.istio.io/merge-metrics', 'proxy.istio.io/config', 'proxy.istio.io/overrides', 'inject.istio.io/templates',
  'ambient.istio.io/redirection', 'ambient.istio.io/bypass-inbound-capture', 'ambient.istio.io/dns-capture',
  'alpha.istio.io/identity',
] as const;

const OTHER = [
  'networking.istio.io/exportTo', 'networking.istio.io/traffic-distribution', 'networking.istio.io/service-type',
  'alpha.istio.io/kubernetes-serviceaccounts', 'alpha.istio.io/canonical-serviceaccounts',
  'install.operator.istio.io/chart-owner', 'install.operator.istio.io/owner-generation', 'install.operator.istio.io/version',
  'galley.istio.io/analyze-suppress', 'istio.io/dry-run', 'istio.io/autoRegistrationGroup', 'istio.io/workloadController',
  'istio.io/connectedAt', 'istio.io/disconnectedAt', 'istio.io/rev',
  'gateway.istio.io/controller-version', 'gateway.istio.io/service-account', 'gateway.istio.io/name-override',
  'ambient.istio.io/waypoint-inbound-binding', 'topology.istio.io/controlPlaneClusters',
] as const;

const POD_SET: ReadonlySet<string> = new Set(POD);
const ALL_SET: ReadonlySet<string> = new Set([...POD, ...OTHER]);

/** `sidecar.istio.io/x`: an annotation in an Istio namespace (a prefix ending in istio.io). */
export function isIstioKey(key: string): boolean {
  const slash = key.indexOf('/');
  return slash > 0 && key.slice(0, slash).endsWith('istio.io');
}

export const isKnownIstioAnnotation = (key: string) => ALL_SET.has(key);
export const isPodAnnotation = (key: string) => POD_SET.has(key);

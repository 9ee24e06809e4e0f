/**
 * Istio's pod annotations that meshcap reads (meshcap-cni, istio-ambient-cni.md §10) or checks (meshcap lint,
 * operator-tools.md §2.1). One spelling for both doors.
 */
export const Annotation = {
  inject: 'sidecar.istio.io/inject',
  /** The injector's record of the containers it added (meshcap-cni's enrollment reads it). */
  status: 'sidecar.istio.io/status',
  templates: 'inject.istio.io/templates',
  interceptionMode: 'sidecar.istio.io/interceptionMode',
  includeOutboundIPRanges: 'traffic.sidecar.istio.io/includeOutboundIPRanges',
  excludeOutboundIPRanges: 'traffic.sidecar.istio.io/excludeOutboundIPRanges',
  includeInboundPorts: 'traffic.sidecar.istio.io/includeInboundPorts',
  excludeInboundPorts: 'traffic.sidecar.istio.io/excludeInboundPorts',
  includeOutboundPorts: 'traffic.sidecar.istio.io/includeOutboundPorts',
  excludeOutboundPorts: 'traffic.sidecar.istio.io/excludeOutboundPorts',
  excludeInterfaces: 'traffic.sidecar.istio.io/excludeInterfaces',
  kubevirtInterfaces: 'traffic.sidecar.istio.io/kubevirtInterfaces',
  rerouteVirtualInterfaces: 'istio.io/reroute-virtual-interfaces',
  redirection: 'ambient.istio.io/redirection',
  dnsCapture: 'ambient.istio.io/dns-capture',
  bypassInboundCapture: 'ambient.istio.io/bypass-inbound-capture',
  statusPort: 'status.sidecar.istio.io/port',
  readinessInitialDelay: 'readiness.status.sidecar.istio.io/initialDelaySeconds',
  readinessPeriod: 'readiness.status.sidecar.istio.io/periodSeconds',
  readinessFailureThreshold: 'readiness.status.sidecar.istio.io/failureThreshold',
  proxyConfig: 'proxy.istio.io/config',
  rewriteAppHTTPProbers: 'sidecar.istio.io/rewriteAppHTTPProbers',
  nativeSidecar: 'sidecar.istio.io/nativeSidecar',
} as const;

/** Istio's pod labels meshcap lint reads. */
export const Label = {
  inject: 'sidecar.istio.io/inject',
  dataplaneMode: 'istio.io/dataplane-mode',
  podSecurityEnforce: 'pod-security.kubernetes.io/enforce',
} as const;

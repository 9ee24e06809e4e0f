import type { Severity } from './findings.js';

/**
 * Every finding code of `meshcap precheck` (MCP…) and `meshcap lint` (MCL…): its severity and its message,
 * in one table. Messages are lowercase fragments, as istioctl's analyzers print them after the origin.
 */

const q = (v: string) => `'${v}'`;

export const CODES = {
  // precheck: a live pod network namespace
  MCP001: { severity: 'error', message: () => 'no traffic-capture rules in this network namespace; all traffic bypasses the proxy' },
  MCP002: { severity: 'warning', message: (p: { a: string; b: string }) => `capture rules present in both ${p.a} and ${p.b}; evaluation order between backends decides which applies` },
  MCP003: { severity: 'warning', message: (p: { rule: string }) => `rule ${q(p.rule)} precedes the capture jump and can skip capture` },
  MCP004: { severity: 'warning', message: (p: { address: string }) => `pod has IPv6 address ${p.address} but no IPv6 capture rules; IPv6 traffic bypasses the proxy` },
  MCP010: { severity: 'error', message: (p: { port: number; address: string }) => `port ${p.port} listens only on ${p.address}; it is unreachable from other pods (sidecar ≥1.10)` },
  MCP011: { severity: 'error', message: (p: { port: number; purpose: string; uid: number }) => `port ${p.port} is reserved by the sidecar (${p.purpose}) but is held by uid ${p.uid}` },
  MCP012: { severity: 'error', message: (p: { port: number }) => `capture redirects to :${p.port} but no socket listens there; redirected connections are refused` },
  MCP013: { severity: 'info', message: (p: { port: number }) => `port ${p.port} is excluded from inbound capture; connections to it bypass the proxy (no mTLS/policy)` },
  MCP020: { severity: 'error', message: (p: { comm: string; pid: number; uid: number }) => `process ${p.comm}(pid ${p.pid}) runs as uid ${p.uid}, which the capture rules exempt; its traffic bypasses the proxy` },
  MCP021: { severity: 'error', message: (p: { comm: string; pid: number; gid: number }) => `process ${p.comm}(pid ${p.pid}) runs with gid ${p.gid}, which the capture rules exempt` },
  MCP030: { severity: 'error', message: (p: { mark: string }) => `TPROXY rules present but policy routing for mark ${p.mark} is missing; intercepted inbound packets are not delivered locally` },
  MCP031: { severity: 'info', message: () => 'TPROXY mode: port 15008 is not exempt from interception' },
  MCP040: { severity: 'warning', message: () => 'ambient redirection rules present but ztunnel is not listening in this netns' },

  // lint: manifests
  MCL001: { severity: 'error', message: (p: { container: string; uid: number }) => `container ${p.container} runs as uid ${p.uid}, which capture exempts; its outbound traffic bypasses the proxy` },
  MCL002: { severity: 'error', message: (p: { container: string; gid: number }) => `container ${p.container} runs with gid ${p.gid}, which capture exempts` },
  MCL003: { severity: 'warning', message: (p: { uid: number; container: string }) => `custom istio-proxy uid ${p.uid} is shared by container ${p.container}; its traffic bypasses the proxy` },
  MCL004: { severity: 'error', message: (p: { port: number; purpose: string }) => `containerPort ${p.port} collides with ${p.purpose} port` },
  MCL005: { severity: 'error', message: () => 'hostNetwork pods are never injected or captured' },
  MCL006: { severity: 'warning', message: (p: { key: string; kind: string; templatePath: string }) => `${p.key} on ${p.kind}.metadata is ignored; move it to ${p.templatePath}` },
  MCL007: { severity: 'warning', message: (p: { key: string }) => `unknown Istio annotation ${p.key} (typo?)` },
  MCL008: {
    severity: 'error',
    message: (p: { key: string; value: string; reason: string; by: 'webhook' | 'meshcap' }) =>
      `invalid ${p.key} ${q(p.value)}: ${p.reason}; ${p.by === 'webhook' ? 'the injection webhook will reject the pod' : 'meshcap rejects it when the pod starts (the webhook lets it through)'}`,
  },
  MCL009: { severity: 'warning', message: (p: { value: string }) => `invalid includeOutboundPorts ${q(p.value)}; not validated at admission, fails later in istio-init` },
  MCL010: { severity: 'warning', message: () => "excludeInboundPorts is ignored unless includeInboundPorts is '*'" },
  MCL011: { severity: 'warning', message: (p: { key: string; value: string; direction: string }) => `${p.key}=${p.value} disables ${p.direction} capture` },
  MCL012: { severity: 'info', message: (p: { list: string }) => `traffic on ${p.list} bypasses the proxy (no mTLS, policy or telemetry)` },
  MCL013: {
    severity: 'warning',
    message: (p: { value: string } | { label: string; annotation: string }) =>
      'value' in p ? `inject value ${q(p.value)} is ignored; namespace default applies` : `label overrides annotation: sidecar.istio.io/inject label ${q(p.label)} wins over annotation ${q(p.annotation)}`,
  },
  MCL014: { severity: 'warning', message: (p: { container: string; uid: number }) => `init container ${p.container} starts after capture rules exist and before the proxy; its outbound TCP is refused unless it runs as uid ${p.uid} or its destinations are excluded` },
  MCL015: { severity: 'info', message: () => 'app containers may start before the proxy listens; early outbound connections are refused' },
  MCL016: { severity: 'warning', message: (p: { port: number }) => `httpGet probe on captured port ${p.port} is not rewritten; it fails under STRICT mTLS` },
  MCL017: { severity: 'warning', message: (p: { port: number }) => `tcpSocket probe on captured port ${p.port} always succeeds (the proxy accepts the connection)` },
  MCL018: { severity: 'warning', message: (p: { port: string; container: string }) => `probe port name ${q(p.port)} not declared in container ${p.container}; it will not be rewritten` },
  MCL019: { severity: 'info', message: (p: { gid: number }) => `TPROXY runs istio-proxy as root with NET_ADMIN; gid ${p.gid} is the capture exemption` },
  MCL020: { severity: 'warning', message: () => "istio-init needs NET_ADMIN/NET_RAW as root; 'restricted' rejects it (use CNI)" },
  MCL021: { severity: 'warning', message: () => 'pods with a sidecar are not enrolled in ambient' },
  MCL022: {
    severity: 'warning',
    message: (p: { annotation: string; value: string; namespace: string }) =>
      `${p.annotation}=${q(p.value)} in namespace ${p.namespace} is denied by the bypass policy; meshcap-cni refuses the pod`,
  },
} as const satisfies Record<string, { severity: Severity; message: (p: never) => string }>;

export type Code = keyof typeof CODES;
/** The severity and message of one code, filled in. */
export function describeCode<C extends Code>(code: C, ...params: Parameters<(typeof CODES)[C]['message']>): { code: C; severity: Severity; message: string } {
  const entry = CODES[code];
  const message = (entry.message as (...p: typeof params) => string)(...params);
  return { code, severity: entry.severity, message };
}

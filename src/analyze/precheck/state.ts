import type { NamespaceState } from '../../inspect/namespace-state.js';

export type { NamespaceState };

export interface PrecheckOptions {
  readonly proxyUid: number;
  readonly proxyGid: number;
  /** The app's inbound ports (--port); undefined = every listener's port that inbound capture covers. */
  readonly ports: readonly number[] | undefined;
}

/** A process whose comm is one of these is the proxy (its own traffic is exempt by design). */
export const PROXY_COMMS: ReadonlySet<string> = new Set(['envoy', 'pilot-agent', 'ztunnel']);

/** Ports the sidecar listens on or reserves (operator-tools.md §1.4), with what each one is for. */
export const RESERVED_PORTS: ReadonlyMap<number, string> = new Map([
  [15000, 'Envoy admin'], [15001, 'outbound capture'], [15004, 'debug'], [15006, 'inbound capture'], [15008, 'HBONE tunnel'],
  [15020, 'agent status'], [15021, 'health'], [15053, 'DNS proxy'], [15090, 'Prometheus'],
]);

/** ztunnel's ports in an ambient pod's namespace: its sockets there are not owned by a process of the pod. */
export const ZTUNNEL_PORTS: ReadonlySet<number> = new Set([15001, 15006, 15008, 15053, 15080]);

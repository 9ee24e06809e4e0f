import { describeCode } from '../codes.js';
import type { Finding } from '../findings.js';
import { addressScope, type Listener } from '../../inspect/listeners.js';
import { inboundCoverage } from './inbound-capture.js';
import { isAmbient, redirectPorts } from './rules-view.js';
import { PROXY_COMMS, RESERVED_PORTS, ZTUNNEL_PORTS, type NamespaceState, type PrecheckOptions } from './state.js';

/** Findings about who listens where (MCP010–013, MCP040). */

/** Ports exempt from inbound capture by design (HBONE, agent, health, Prometheus), and the ambient local port. */
const BY_DESIGN = new Set([...RESERVED_PORTS.keys(), 15080]);

const tcp = (state: NamespaceState) => state.listeners.filter((l) => l.protocol === 'tcp');

function byPort(listeners: readonly Listener[]): Map<number, Listener[]> {
  const m = new Map<number, Listener[]>();
  for (const l of listeners) m.set(l.port, [...(m.get(l.port) ?? []), l]);
  return m;
}

function checkLoopbackOnly(state: NamespaceState, options: PrecheckOptions, covers: ((p: number) => boolean | undefined) | undefined): Finding[] {
  const ports = byPort(tcp(state));
  const inbound = options.ports ?? [...ports.keys()].filter((p) => covers?.(p) === true && !BY_DESIGN.has(p));
  const out: Finding[] = [];
  for (const port of [...new Set(inbound)].sort((a, b) => a - b)) {
    const here = ports.get(port) ?? [];
    const first = here[0];
    if (first !== undefined && here.every((l) => addressScope(l.address) === 'loopback')) out.push({ ...describeCode('MCP010', { port, address: first.address }), port });
  }
  return out;
}

function checkReserved(state: NamespaceState, options: PrecheckOptions, ambient: boolean): Finding[] {
  const proxySockets = new Set(state.processes.filter((p) => PROXY_COMMS.has(p.comm)).flatMap((p) => p.sockets));
  const out: Finding[] = [];
  const seen = new Set<number>();
  for (const l of state.listeners) {
    const purpose = RESERVED_PORTS.get(l.port);
    if (purpose === undefined || (l.protocol === 'udp' && l.port !== 15053) || seen.has(l.port)) continue;
    if (l.uid === options.proxyUid || proxySockets.has(l.inode) || (ambient && ZTUNNEL_PORTS.has(l.port))) continue;
    seen.add(l.port);
    out.push({ ...describeCode('MCP011', { port: l.port, purpose, uid: l.uid }), port: l.port });
  }
  return out;
}

function checkRedirectTargets(state: NamespaceState, ambient: boolean): Finding[] {
  const listening = new Set(tcp(state).map((l) => l.port));
  if (ambient) {
    const missing = [15001, 15006, 15008].some((p) => !listening.has(p));
    return missing ? [describeCode('MCP040')] : [];
  }
  return [...redirectPorts(state.rules)].filter((p) => !listening.has(p)).sort((a, b) => a - b).map((port) => ({ ...describeCode('MCP012', { port }), port }));
}

function checkExcluded(state: NamespaceState, covers: ((p: number) => boolean | undefined) | undefined, ambient: boolean): Finding[] {
  if (covers === undefined || ambient) return [];
  const ports = new Set(tcp(state).filter((l) => addressScope(l.address) !== 'loopback' && !BY_DESIGN.has(l.port) && covers(l.port) === false).map((l) => l.port));
  return [...ports].sort((a, b) => a - b).map((port) => ({ ...describeCode('MCP013', { port }), port }));
}

export function checkSockets(state: NamespaceState, options: PrecheckOptions): Finding[] {
  const covers = inboundCoverage(state.rules);
  const ambient = isAmbient(state.rules);
  return [
    ...checkRedirectTargets(state, ambient),
    ...checkLoopbackOnly(state, options, covers),
    ...checkReserved(state, options, ambient),
    ...checkExcluded(state, covers, ambient),
  ];
}

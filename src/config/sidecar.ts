import { collectRaw, parseRaw, type Env } from './sources.js';
import { SIDECAR_INPUTS } from './sidecar-inputs.js';
import { sidecarInputSchema, type SidecarConfig } from './schema.js';
import { resolveSidecarHostFacts } from './environment.js';
import type { Host } from './host.js';

export type FlagValues = Readonly<Record<string, string | boolean | undefined>>;

/** Notes for the log about inputs Istio would silently ignore or quietly reinterpret. */
export function describeIgnoredInputs(cfg: SidecarConfig): string[] {
  const notes: string[] = [];
  if (cfg.inboundPorts !== '*' && cfg.inboundExcludePorts.length > 0) notes.push('--istio-local-exclude-ports is ignored unless --istio-inbound-ports is "*"');
  if (cfg.ownerGroupsInclude !== '*' && cfg.ownerGroupsExclude.length > 0) notes.push('ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE is ignored unless ISTIO_OUTBOUND_OWNER_GROUPS is "*"');
  if (cfg.redirectDns && !cfg.captureAllDns && cfg.dnsServers.length === 0) notes.push('--redirect-dns found no nameservers: DNS is not captured');
  return notes;
}

/**
 * argv flags + env → the validated sidecar Config: Istio's precedence (flag > alias env > env > default),
 * every value validated (ConfigError, exit 2), then the host facts (IPv6, nameservers, ids) resolved.
 */
export function loadSidecarConfig(flags: FlagValues, env: Env, host: Host): SidecarConfig {
  const inputs = parseRaw(sidecarInputSchema, collectRaw(SIDECAR_INPUTS, flags, env));
  const facts = resolveSidecarHostFacts(inputs, host);
  const { proxyUid: _u, proxyGid: _g, ownerGroupsInclude: _i, ownerGroupsExclude: _e, dnsServers: _d, ...rest } = inputs;
  return { ...rest, ...facts, mode: 'sidecar' };
}

import * as z from 'zod/mini';
import { ConfigError } from '../errors.js';
import { parseHostAddress, type Cidr, type Parsed } from '../model/cidr.js';
import { detectIpv6 } from './environment.js';
import { bool, dryRunFormat, forceIptablesBinary, fromParser, ipv6Mode, logFormat, logOutputLevel, optionalPath, port } from './fields.js';
import type { Host } from './host.js';
import { AMBIENT_HOST_INPUTS, AMBIENT_INPUTS } from './ambient-inputs.js';
import { collectRaw, parseRaw, type Env } from './sources.js';
import { parseEnum, parseGoBool, parseId, parseInterfaceList, splitList } from './values.js';
import { findKubeletUid } from './kubelet.js';
import { checkNftInterfaces } from './nft.js';
import type { FlagValues } from './sidecar.js';

function parseFamilyAddress(family: 'ipv4' | 'ipv6') {
  return (s: string): Parsed<Cidr> => {
    const r = parseHostAddress(s, { bare: true });
    if (r.ok && r.value.family !== family) return { ok: false, reason: `must be an ${family === 'ipv4' ? 'IPv4' : 'IPv6'} address` };
    return r;
  };
}

function parsePodIps(s: string): Parsed<Cidr[]> {
  const out: Cidr[] = [];
  for (const item of splitList(s)) {
    const r = parseHostAddress(item, { bare: true });
    if (!r.ok) return { ok: false, reason: `${JSON.stringify(item)}: ${r.reason}` };
    out.push(r.value);
  }
  return { ok: true, value: out };
}

const common = {
  netns: optionalPath,
  ipv6: ipv6Mode,
  hostProbeSnat: fromParser(parseFamilyAddress('ipv4')),
  hostProbeSnatV6: fromParser(parseFamilyAddress('ipv6')),
  dryRun: bool,
  dryRunFormat,
  cleanupOnly: bool,
  forceIptablesBinary,
  nativeNftables: bool,
  logFormat,
  logOutputLevel,
};

export const ambientInputSchema = z.object({
  ...common,
  inbound: fromParser(parseEnum(['tproxy', 'redirect'] as const)),
  redirectDns: bool,
  podDnsCapture: fromParser((s): Parsed<boolean | undefined> => (s === '' ? { ok: true, value: undefined } : parseGoBool(s))),
  ingressMode: bool,
  virtualInterfaces: fromParser(parseInterfaceList),
  outboundPort: port,
  inboundPort: port,
  tunnelPort: port,
  dnsPort: port,
  reconcile: bool,
});

export const ambientHostInputSchema = z.object({
  ...common,
  addPodIp: fromParser(parsePodIps),
  removePodIp: fromParser(parsePodIps),
  kubeletUid: fromParser((s): Parsed<number | undefined> => (s === '' ? { ok: true, value: undefined } : parseId(s))),
});

interface Ipv6Facts {
  readonly enableIpv6: boolean;
  readonly ipv6Reason: string;
}

/** Ambient's IPv6: on when the namespace has any usable IPv6 address (Istio's agent enables it globally). */
function resolveIpv6(mode: 'auto' | 'on' | 'off', netns: string | undefined, host: Host): Ipv6Facts {
  if (mode !== 'auto') return { enableIpv6: mode === 'on', ipv6Reason: `--ipv6 ${mode}` };
  const d = detectIpv6(host.interfaceAddresses(netns), true);
  return { enableIpv6: d.enabled, ipv6Reason: d.reason };
}

export type AmbientConfig = Omit<z.output<typeof ambientInputSchema>, 'redirectDns' | 'podDnsCapture'> &
  Ipv6Facts & { readonly mode: 'ambient'; readonly dns: boolean; readonly dnsReason: string };

export type AmbientHostConfig = z.output<typeof ambientHostInputSchema> & Ipv6Facts & { readonly mode: 'ambient-host' };

/**
 * Native nftables has only Istio's redirect layout: without --inbound it is chosen, with --inbound tproxy
 * it is an error. */
function resolveNftInbound(raw: { inbound: { value: string; source: string } }, inputs: { nativeNftables: boolean; inbound: 'tproxy' | 'redirect' }): 'tproxy' | 'redirect' {
  if (!inputs.nativeNftables) return inputs.inbound;
  if (raw.inbound.source.startsWith('default')) return 'redirect';
  if (inputs.inbound === 'tproxy') throw new ConfigError(raw.inbound.source, 'tproxy', 'native nftables mode has only the redirect layout; use --inbound redirect');
  return inputs.inbound;
}

/** `meshcap ambient` flags + env → Config. DNS capture is the pod's override if set, else the global setting. */
export function loadAmbientConfig(flags: FlagValues, env: Env, host: Host): AmbientConfig {
  const raw = collectRaw(AMBIENT_INPUTS, flags, env);
  const inputs = parseRaw(ambientInputSchema, raw);
  const ports = [['--outbound-port', inputs.outboundPort], ['--inbound-port', inputs.inboundPort], ['--tunnel-port', inputs.tunnelPort], ['--dns-port', inputs.dnsPort]] as const;
  ports.forEach(([flag, p], i) => {
    const clash = ports.slice(0, i).find(([, q]) => q === p);
    if (clash) throw new ConfigError(flag, String(p), `is already ${clash[0]}; ztunnel's ports must differ`);
  });
  const inbound = resolveNftInbound(raw, inputs);
  if (inputs.nativeNftables) checkNftInterfaces('--virtual-interfaces', inputs.virtualInterfaces);
  const { redirectDns, podDnsCapture, ...rest } = inputs;
  const dns = podDnsCapture ?? redirectDns;
  const dnsReason = podDnsCapture === undefined ? `--redirect-dns ${redirectDns}` : `--pod-dns-capture ${podDnsCapture}`;
  return { ...rest, inbound, ...resolveIpv6(inputs.ipv6, inputs.netns, host), dns, dnsReason, mode: 'ambient' };
}

/** `meshcap ambient-host` flags + env → Config. Pod IPs of a family that is off are refused. */
export function loadAmbientHostConfig(flags: FlagValues, env: Env, host: Host): AmbientHostConfig {
  const raw = collectRaw(AMBIENT_HOST_INPUTS, flags, env);
  const inputs = parseRaw(ambientHostInputSchema, raw);
  const facts = resolveIpv6(inputs.ipv6, inputs.netns, host);
  for (const [flag, list] of [['--add-pod-ip', inputs.addPodIp], ['--remove-pod-ip', inputs.removePodIp]] as const) {
    const v6 = list.find((c) => c.family === 'ipv6');
    if (v6 && !facts.enableIpv6) throw new ConfigError(flag, v6.text, `is IPv6 but IPv6 is off (${facts.ipv6Reason})`);
  }
  // nft has no --socket-exists: the probe SNAT matches the kubelet's UID (not needed to clean up).
  const kubeletUid = inputs.nativeNftables && !inputs.cleanupOnly ? (inputs.kubeletUid ?? findKubeletUid()) : inputs.kubeletUid;
  return { ...inputs, kubeletUid, ...facts, mode: 'ambient-host' };
}

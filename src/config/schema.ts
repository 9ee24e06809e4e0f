import * as z from 'zod/mini';
import { isLoopbackCidr, parseCidr, parseHostAddress, type Cidr } from '../model/cidr.js';
import type { OwnerId } from '../model/rule.js';
import {
  parseDuration, parseEach, parseIdList,
  parseInterfaceList, parseMark, parseOwnerGroupList, parseOwnerGroupsOrAll, parsePath, parsePortList,
  parsePortsOrAll, parseRouteTable,
} from './values.js';
import { bool, dryRunFormat, forceIptablesBinary, fromParser, ipv6Mode, logFormat, logOutputLevel, optionalPath, port } from './fields.js';
import type { Parsed } from '../model/cidr.js';
import { Mark } from '../model/names.js';

const parseCidrList = (s: string) => parseEach(s, parseCidr);
const parseCidrsOrAll = (s: string): Parsed<'*' | Cidr[]> => (s === '*' ? { ok: true, value: '*' } : parseCidrList(s));
const parseAddressList = (s: string) => parseEach(s, parseHostAddress);

function parseLoopbackCidr(s: string): Parsed<Cidr> {
  const r = parseCidr(s);
  if (!r.ok) return r;
  if (r.value.family !== 'ipv4' || !isLoopbackCidr(r.value)) return { ok: false, reason: 'must be an IPv4 loopback CIDR (127.0.0.0/8)' };
  if (r.value.prefix < 8) return { ok: false, reason: 'prefix length must be 8-32' };
  return r;
}

function parseMode(s: string): Parsed<'REDIRECT' | 'TPROXY'> {
  if (s === '' || s === 'REDIRECT') return { ok: true, value: 'REDIRECT' };
  if (s === 'TPROXY') return { ok: true, value: 'TPROXY' };
  return { ok: false, reason: 'must be "REDIRECT" or "TPROXY" (Istio silently treats anything else as REDIRECT)' };
}

/** An exclude list: CIDRs, never "*" (the CLI's -x and the excludeOutboundIPRanges annotation). */
export function parseExcludeCidrs(s: string): Parsed<Cidr[]> {
  if (s.split(',').includes('*')) return { ok: false, reason: '"*" cannot be excluded' };
  return parseCidrList(s);
}

/** Sidecar mode's validated inputs, before anything is read from the host. */
export const sidecarInputSchema = z.object({
  envoyPort: port,
  inboundCapturePort: port,
  inboundTunnelPort: port,
  proxyUid: fromParser(parseIdList),
  proxyGid: fromParser(parseIdList),
  interceptionMode: fromParser(parseMode),
  inboundPorts: fromParser(parsePortsOrAll),
  inboundExcludePorts: fromParser(parsePortList),
  excludeInterfaces: fromParser(parseInterfaceList),
  outboundInclude: fromParser(parseCidrsOrAll),
  outboundExclude: fromParser(parseExcludeCidrs),
  outboundPorts: fromParser(parsePortList),
  outboundExcludePorts: fromParser(parsePortList),
  kubeVirtInterfaces: fromParser(parseInterfaceList),
  tproxyMark: fromParser(parseMark).check(z.refine((m) => m !== Mark.tproxyOutbound, `mark ${Mark.tproxyOutbound} is the hard-coded outbound mark of TPROXY mode`)),
  tproxyRouteTable: fromParser(parseRouteTable),
  dryRun: bool,
  iptablesProbePort: port,
  probeTimeout: fromParser(parseDuration),
  skipRuleApply: bool,
  runValidation: bool,
  redirectDns: bool,
  dropInvalid: bool,
  dualStack: bool,
  captureAllDns: bool,
  networkNamespace: optionalPath,
  cniMode: bool,
  reconcile: bool,
  cleanupOnly: bool,
  forceApply: bool,
  nativeNftables: bool,
  forceIptablesBinary,
  ownerGroupsInclude: fromParser(parseOwnerGroupsOrAll),
  ownerGroupsExclude: fromParser(parseOwnerGroupList),
  ipv4LoopbackCidr: fromParser(parseLoopbackCidr),
  envoyUser: z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,31}$/, 'not a valid user name')),
  dryRunFilePath: optionalPath,
  logOutputLevel,
  logAsJson: bool,
  ipv6: ipv6Mode,
  dnsServers: fromParser((s): Parsed<Cidr[] | undefined> => (s === '' ? { ok: true, value: undefined } : parseAddressList(s))),
  resolvConf: fromParser(parsePath),
  netns: optionalPath,
  dryRunFormat,
  logFormat,
});

export type SidecarInputs = z.output<typeof sidecarInputSchema>;

/** What the host decided: read once by config/environment.ts, validated like any input. */
export interface SidecarHostFacts {
  readonly enableIpv6: boolean;
  readonly ipv6Reason: string;
  /** Nameservers for DNS capture (empty when DNS capture needs none or found none). */
  readonly dnsServers: readonly Cidr[];
  readonly proxyUids: readonly OwnerId[];
  readonly proxyGids: readonly OwnerId[];
  readonly ownerGroupsInclude: '*' | readonly OwnerId[];
  readonly ownerGroupsExclude: readonly OwnerId[];
}

/** The one validated sidecar Config the model and the executor work from. */
export type SidecarConfig = Omit<SidecarInputs, 'proxyUid' | 'proxyGid' | 'ownerGroupsInclude' | 'ownerGroupsExclude' | 'dnsServers'> &
  SidecarHostFacts & { readonly mode: 'sidecar' };

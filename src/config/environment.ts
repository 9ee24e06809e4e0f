import ipaddr from 'ipaddr.js';
import { ConfigError, EnvironmentError } from '../errors.js';
import { parseHostAddress, type Cidr } from '../model/cidr.js';
import { DEFAULT_PROXY_UID } from '../model/names.js';
import type { OwnerId } from '../model/rule.js';
import type { Host, InterfaceAddress } from './host.js';
import type { SidecarHostFacts, SidecarInputs } from './schema.js';

/** Istio's IPv6 detection (istio-sidecar.md §7): skip loopback and link-local; the first address decides. */
export function detectIpv6(addrs: readonly InterfaceAddress[], dualStack: boolean): { enabled: boolean; reason: string } {
  const usable = addrs.filter((a) => {
    if (a.internal || !ipaddr.isValid(a.address)) return false;
    const range = ipaddr.parse(a.address).range();
    return range !== 'loopback' && range !== 'linkLocal' && range !== 'multicast';
  });
  if (usable.length === 0) return { enabled: false, reason: 'no non-loopback address found; IPv6 off' };
  const v6 = usable.find((a) => a.family === 'IPv6');
  if (dualStack) {
    return v6 ? { enabled: true, reason: `dual-stack and IPv6 address ${v6.address}` } : { enabled: false, reason: 'dual-stack but no IPv6 address' };
  }
  // The kernel lists IPv4 addresses before IPv6 ones, so Istio's "first address" is IPv4 whenever there is one.
  const first = usable.find((a) => a.family === 'IPv4') ?? usable[0];
  return first?.family === 'IPv6'
    ? { enabled: true, reason: `first address ${first.address} is IPv6` }
    : { enabled: false, reason: `first address ${first?.address} is IPv4` };
}

/** `nameserver` lines of a resolv.conf; lines that are not an address are skipped, as the resolver does. */
export function parseResolvConf(text: string): Cidr[] {
  const out: Cidr[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== 'nameserver' || fields[1] === undefined) continue;
    const parsed = parseHostAddress(fields[1]);
    if (parsed.ok) out.push(parsed.value);
  }
  return out;
}

/** Lines `name:x:id:...` of /etc/passwd or /etc/group → name → id. */
function parseIdDatabase(text: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of (text ?? '').split('\n')) {
    const [name, , id] = line.split(':');
    if (name && id && /^[0-9]+$/.test(id)) out.set(name, Number(id));
  }
  return out;
}

function loadDnsServers(inputs: SidecarInputs, host: Host): Cidr[] {
  if (!inputs.redirectDns || inputs.captureAllDns) return [];
  if (inputs.dnsServers !== undefined) return inputs.dnsServers;
  if (inputs.resolvConf === '/dev/null') return [];
  const text = host.readText(inputs.resolvConf);
  if (text === undefined) throw new EnvironmentError(`cannot read --resolv-conf ${inputs.resolvConf}: no such file (needed by --redirect-dns)`);
  return parseResolvConf(text);
}

function resolveGroups(list: readonly OwnerId[], groups: () => Map<string, number>, field: string, strict: boolean): OwnerId[] {
  return list.map((g) => {
    if (g.id !== undefined) return g;
    const id = groups().get(g.text);
    if (id === undefined && strict) {
      throw new ConfigError(`env ${field}`, g.text, `group "${g.text}" is not in /etc/group (use a numeric gid)`);
    }
    return { text: g.text, id };
  });
}

/**
 * Reads what sidecar mode needs from the host: IPv6 detection, nameservers, the default proxy uid and
 * group names. Group names must resolve unless the output is Istio's dry-run framing, which prints names.
 */
export function resolveSidecarHostFacts(inputs: SidecarInputs, host: Host): SidecarHostFacts {
  const ipv6 =
    inputs.ipv6 === 'auto' ? detectIpv6(host.interfaceAddresses(inputs.netns), inputs.dualStack) : { enabled: inputs.ipv6 === 'on', reason: `--ipv6 ${inputs.ipv6}` };
  let proxyUids = inputs.proxyUid;
  if (proxyUids.length === 0) {
    const uid = parseIdDatabase(host.readText('/etc/passwd')).get(inputs.envoyUser) ?? DEFAULT_PROXY_UID;
    proxyUids = [{ text: String(uid), id: uid }];
  }
  let groupDb: Map<string, number> | undefined;
  const groups = () => (groupDb ??= parseIdDatabase(host.readText('/etc/group')));
  const strict = !(inputs.dryRun && inputs.dryRunFormat === 'istio');
  return {
    enableIpv6: ipv6.enabled,
    ipv6Reason: ipv6.reason,
    dnsServers: loadDnsServers(inputs, host),
    proxyUids,
    proxyGids: inputs.proxyGid.length > 0 ? inputs.proxyGid : proxyUids,
    ownerGroupsInclude: inputs.ownerGroupsInclude === '*' ? '*' : resolveGroups(inputs.ownerGroupsInclude, groups, 'ISTIO_OUTBOUND_OWNER_GROUPS', strict),
    ownerGroupsExclude: resolveGroups(inputs.ownerGroupsExclude, groups, 'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', strict),
  };
}

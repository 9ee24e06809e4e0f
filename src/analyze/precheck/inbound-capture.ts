import { cidr } from '../../model/cidr.js';
import { Port } from '../../model/names.js';
import type { NamespaceRules } from '../../inspect/namespace-rules.js';
import type { Packet } from '../../trace/packet.js';
import { traceFlow } from '../../trace/walk.js';
import { listSources, walkTables, type RuleSource } from './rule-sources.js';
import { inboundEntry, isAmbient } from './rules-view.js';

/**
 * The connection asked about arrives from another pod at an address and on a device no rule names (a
 * documentation address, no device name), so that only its port decides, as it did for the app's ports.
 */
const ARRIVAL = { ipv4: cidr('192.0.2.1/32').bytes, ipv6: cidr('2001:db8::1/128').bytes } as const;

/**
 * trace's walk of a new TCP connection to `port` over the tables the kernel runs for a source (a native
 * source: the walked iptables backend and the native tables, in priority order): captured (REDIRECT or
 * TPROXY), not, or undefined when the walk cannot tell.
 */
function captures(rules: NamespaceRules, b: RuleSource, port: number): boolean | undefined {
  const packet: Packet = {
    family: b.family, proto: 'tcp', src: undefined, dst: ARRIVAL[b.family], sport: undefined, dport: port,
    owner: undefined, mark: 0, ctmark: 0, inIface: '', outIface: '', natted: { dnat: false, snat: false },
  };
  const sets = b.backend === 'native' ? rules.nftRules?.sets : undefined;
  const { verdict } = traceFlow({ direction: 'inbound', packet, local: false }, walkTables(rules, b), { sets });
  return verdict.k === 'unknown' ? undefined : verdict.k === 'redirect' || verdict.k === 'tproxy';
}

/**
 * Inbound capture as a question per port — does a new TCP connection from another pod reach the proxy? —
 * answered by trace's walk over every source whose PREROUTING jumps into ISTIO_INBOUND (native: a prerouting
 * base chain into istio-inbound): true when one of them captures it, undefined when a walk met a rule it
 * cannot evaluate, else false. Undefined as a whole when no source captures inbound at all. Ambient captures
 * every port but the tunnel's.
 */
export function inboundCoverage(rules: NamespaceRules): ((port: number) => boolean | undefined) | undefined {
  if (isAmbient(rules)) return (port) => port !== Port.tunnel;
  const backends = listSources(rules).filter((b) => inboundEntry(b) !== undefined);
  if (backends.length === 0) return undefined;
  return (port) => {
    const answers = backends.map((b) => captures(rules, b, port));
    return answers.includes(true) ? true : answers.includes(undefined) ? undefined : false;
  };
}

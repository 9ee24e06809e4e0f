import { isPerFamily, type Clause } from '../model/rule.js';
import type { InspectedClause } from '../inspect/types.js';
import { inCidr, type Packet, type TraceEnv } from './packet.js';

/** Three-valued: a clause matches, does not, or cannot be evaluated here. */
export type Truth = boolean | 'unknown';

const flip = (v: Truth, not: boolean | undefined): Truth => (v === 'unknown' ? v : not ? !v : v);

/** `-i eth+` matches every name starting with `eth`; a hook without that device matches no name. */
export function ifaceMatches(have: string, pattern: string): boolean {
  if (have === '') return false;
  return pattern.endsWith('+') ? have.startsWith(pattern.slice(0, -1)) : have === pattern;
}

function maskedEquals(value: number, mark: number, mask: number | undefined): boolean {
  const m = mask ?? 0xffffffff;
  return ((value & m) >>> 0) === ((mark & m) >>> 0);
}

function portOf(p: Packet, dir: 'dport' | 'sport'): number | undefined {
  return dir === 'dport' ? p.dport : p.sport;
}

/** An unknown (undefined) source port is an ephemeral one that no port match names. */
function inRanges(port: number | undefined, ranges: readonly (readonly [number, number])[]): boolean {
  return port !== undefined && ranges.some(([a, b]) => port >= a && port <= b);
}

function ctStates(p: Packet): string[] {
  return ['NEW', ...(p.natted.dnat ? ['DNAT'] : []), ...(p.natted.snat ? ['SNAT'] : [])];
}

function setMatch(p: Packet, env: TraceEnv, name: string, dirs: readonly ('src' | 'dst')[]): Truth {
  const members = env.sets?.get(name);
  if (members === undefined || dirs.length !== 1) return 'unknown';
  const addr = dirs[0] === 'src' ? p.src : p.dst;
  if (addr === undefined) return false;
  return members.some((c) => inCidr(addr, c));
}

function evaluateModel(c: Clause, p: Packet, env: TraceEnv): Truth {
  switch (c.k) {
    case 'src':
    case 'dst': {
      const cidr = isPerFamily(c.addr) ? c.addr[p.family] : c.addr;
      const addr = c.k === 'src' ? p.src : p.dst;
      return flip(addr === undefined ? cidr.prefix === 0 : inCidr(addr, cidr), c.not);
    }
    case 'in':
      return flip(ifaceMatches(p.inIface, c.iface), c.not);
    case 'out':
      return flip(ifaceMatches(p.outIface, c.iface), c.not);
    case 'proto':
    case 'protomatch':
      return p.proto === c.proto;
    case 'port':
      return flip(inRanges(portOf(p, c.dir), [[c.port, c.port]]), c.not);
    case 'multiport':
      return flip(c.ports.includes(p.dport), c.not);
    case 'socket-exists':
      return p.owner !== undefined;
    case 'owner':
      if (p.owner === undefined) return false;
      return flip(c.id.id === undefined ? 'unknown' : (c.kind === 'uid' ? p.owner.uid : p.owner.gid) === c.id.id, c.not);
    case 'mark':
      return flip(maskedEquals(p.mark, c.mark, c.mask), c.not);
    case 'connmark':
      return flip(maskedEquals(p.ctmark, c.mark, c.mask), c.not);
    case 'conntrack':
      return c.states.some((s) => ctStates(p).includes(s));
    case 'set':
      return setMatch(p, env, typeof c.name === 'string' ? c.name : c.name[p.family], [c.dir]);
  }
}

/** Evaluates one clause against the packet as the kernel would for the first packet of a connection. */
export function evaluateClause(c: InspectedClause, p: Packet, env: TraceEnv): Truth {
  switch (c.k) {
    case 'comment':
      return true;
    case 'proto-other': {
      const names: Record<string, string> = { '6': 'tcp', '17': 'udp' };
      const proto = names[c.proto] ?? c.proto;
      return flip(proto === 'all' || proto === '0' || proto === p.proto, c.not);
    }
    case 'port-range':
      return flip(inRanges(portOf(p, c.dir), [[c.from, c.to]]), c.not);
    case 'ports': {
      const v = c.dir === 'any' ? inRanges(p.dport, c.ranges) || inRanges(p.sport, c.ranges) : inRanges(portOf(p, c.dir), c.ranges);
      return flip(v, c.not);
    }
    case 'owner-range': {
      if (p.owner === undefined) return false;
      const id = c.kind === 'uid' ? p.owner.uid : p.owner.gid;
      return flip(id >= c.from && id <= c.to, c.not);
    }
    case 'socket-exists-not':
      return p.owner === undefined;
    case 'set-match':
      return flip(setMatch(p, env, c.name, c.dirs), c.not);
    case 'state':
      return flip(c.states.some((s) => ctStates(p).includes(s)), c.not);
    case 'tcp-flags': {
      if (p.proto !== 'tcp') return false;
      const set = new Set(['SYN']);
      const all = (list: readonly string[]) => (list.includes('ALL') ? ['FIN', 'SYN', 'RST', 'PSH', 'ACK', 'URG'] : list.includes('NONE') ? [] : list);
      const ok = all(c.mask).every((f) => set.has(f) === all(c.comp).includes(f));
      return flip(ok, c.not);
    }
    case 'nfproto':
      return p.family === c.family;
    case 'foreign':
      return 'unknown';
    default:
      return evaluateModel(c, p, env);
  }
}

/**
 * A rule's clauses together, as the kernel ANDs them: false as soon as one is false (then an unreadable clause
 * does not matter), unknown if one cannot be evaluated and none is false.
 */
export function evaluateMatch(match: readonly InspectedClause[], p: Packet, env: TraceEnv): Truth {
  let unknown = false;
  for (const c of match) {
    const v = evaluateClause(c, p, env);
    if (v === false) return false;
    if (v === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : true;
}

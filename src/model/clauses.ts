import type { AddressValue, Clause, OwnerId, Proto, Rule, RuleFamily, Table, Target } from './rule.js';

/** Small constructors so rule lists read like Istio's rules. Pure data; no strings are built here. */

export const proto = (p: Proto): Clause => ({ k: 'proto', proto: p });
export const tcp = proto('tcp');
export const udp = proto('udp');
export const dport = (port: number, not = false): Clause => ({ k: 'port', dir: 'dport', port, not });
export const sport = (port: number, not = false): Clause => ({ k: 'port', dir: 'sport', port, not });
export const notDports = (ports: readonly number[]): Clause => ({ k: 'multiport', not: true, ports });
export const dst = (addr: AddressValue, not = false): Clause => ({ k: 'dst', addr, not });
export const src = (addr: AddressValue, not = false): Clause => ({ k: 'src', addr, not });
export const inIface = (iface: string): Clause => ({ k: 'in', iface });
export const outIface = (iface: string, not = false): Clause => ({ k: 'out', iface, not });
export const owner = (kind: 'uid' | 'gid', id: OwnerId, not = false): Clause => ({ k: 'owner', kind, id, not });
export const markIs = (mark: number, not = false): Clause => ({ k: 'mark', mark, not });
export const connmarkIs = (mark: number): Clause => ({ k: 'connmark', mark });
export const ctstate = (...states: string[]): Clause => ({ k: 'conntrack', states });

export const jump = (chain: string): Target => ({ k: 'jump', chain });
export const RETURN = jump('RETURN');
export const ACCEPT = jump('ACCEPT');
export const DROP = jump('DROP');
export const redirectTo = (port: number, spelling: 'to-ports' | 'to-port' = 'to-ports'): Target => ({ k: 'redirect', port, spelling });
export const setMark = (mark: number): Target => ({ k: 'set-mark', mark });
export const ctZone = (zone: number): Target => ({ k: 'ct-zone', zone });

export interface RuleOptions {
  readonly family?: RuleFamily;
  /** Insert at this 1-based position instead of appending. */
  readonly insert?: number;
}

/** Builds a rule appended (or inserted) to `table`/`chain`. */
export function rule(table: Table, chain: string, match: readonly Clause[], target: Target, purpose: string, opts: RuleOptions = {}): Rule {
  return {
    family: opts.family ?? 'both',
    table,
    chain,
    op: opts.insert === undefined ? { k: 'append' } : { k: 'insert', position: opts.insert },
    match,
    target,
    purpose,
  };
}

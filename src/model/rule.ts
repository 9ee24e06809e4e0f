import type { Cidr, Family } from './cidr.js';

export type { Family } from './cidr.js';
export type Table = 'filter' | 'nat' | 'mangle' | 'raw';
export type RuleFamily = Family | 'both';
export type Proto = 'tcp' | 'udp';

/** An address that differs per family (`127.0.0.1/32` vs `::1/128`); resolved by the renderer. */
export interface PerFamily<T> {
  readonly ipv4: T;
  readonly ipv6: T;
}
export type AddressValue = Cidr | PerFamily<Cidr>;

/** A user or group for `-m owner`: a number, or (groups only) a name with its id when it resolved. */
export interface OwnerId {
  readonly text: string;
  readonly id: number | undefined;
}

/**
 * One match clause, kept in Istio's spelling order. The save renderer reorders them the way the kernel
 * prints them; the Istio renderer prints them as they stand.
 */
export type Clause =
  | { readonly k: 'src' | 'dst'; readonly not?: boolean; readonly addr: AddressValue }
  | { readonly k: 'in' | 'out'; readonly not?: boolean; readonly iface: string }
  | { readonly k: 'proto'; readonly proto: Proto }
  /** `--dport N`; `explicit` spells the protocol match (`-m udp --dport 53`) as some Istio rules do. */
  | { readonly k: 'port'; readonly dir: 'dport' | 'sport'; readonly not?: boolean; readonly port: number; readonly explicit?: boolean }
  /** A bare protocol match with no port (`-p tcp -m tcp`), as Istio's ambient rules spell it. */
  | { readonly k: 'protomatch'; readonly proto: Proto }
  | { readonly k: 'socket-exists' }
  | { readonly k: 'set'; readonly name: string | PerFamily<string>; readonly dir: 'src' | 'dst' }
  | { readonly k: 'multiport'; readonly not?: boolean; readonly ports: readonly number[] }
  | { readonly k: 'owner'; readonly kind: 'uid' | 'gid'; readonly not?: boolean; readonly id: OwnerId }
  | { readonly k: 'mark' | 'connmark'; readonly not?: boolean; readonly mark: number; readonly mask?: number }
  | { readonly k: 'conntrack'; readonly states: readonly string[] };

export type Target =
  | { readonly k: 'jump'; readonly chain: string }
  | { readonly k: 'redirect'; readonly port: number; readonly spelling: 'to-ports' | 'to-port' }
  | { readonly k: 'set-mark'; readonly mark: number; readonly mask?: number }
  | { readonly k: 'connmark'; readonly op: 'save' | 'restore'; readonly explicitMasks?: boolean }
  | { readonly k: 'connmark-set'; readonly mark: number; readonly mask: number }
  /** Sidecar spells `--tproxy-mark M/0xffffffff --on-port P` (decimal mark); ambient `--on-port P --tproxy-mark 0x111/0xfff`. */
  | { readonly k: 'tproxy'; readonly mark: number; readonly mask: number; readonly port: number; readonly spelling?: 'sidecar' | 'ambient' }
  | { readonly k: 'snat'; readonly to: AddressValue }
  | { readonly k: 'ct-zone'; readonly zone: number };

export type RuleOp = { readonly k: 'append' } | { readonly k: 'insert'; readonly position: number };

export interface Rule {
  readonly family: RuleFamily;
  readonly table: Table;
  readonly chain: string;
  readonly op: RuleOp;
  readonly match: readonly Clause[];
  readonly target: Target;
  /** Why the rule exists: a short id used by tests, logs and --explain. */
  readonly purpose: string;
}

export function appliesTo(rule: Rule, family: Family): boolean {
  return rule.family === 'both' || rule.family === family;
}

export function isPerFamily(addr: AddressValue): addr is PerFamily<Cidr> {
  return 'ipv4' in addr;
}

/** The chain a rule jumps to, if the target is a jump. */
export function jumpTarget(rule: Rule): string | undefined {
  return rule.target.k === 'jump' ? rule.target.chain : undefined;
}

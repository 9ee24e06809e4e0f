import type { Family } from './cidr.js';
import type { Rule } from './rule.js';

/** An `ip rule` for TPROXY / ambient policy routing: fwmark[/mask] → table. */
export interface IpRulePlan {
  readonly family: Family;
  readonly mark: number;
  readonly mask?: number;
  readonly table: number;
  readonly priority?: number;
}

/** `ip route add local <all> dev lo table N`. */
export interface LocalRoutePlan {
  readonly family: Family;
  readonly table: number;
}

/** An address meshcap adds to `lo` (IPv6 `::6/128` for inbound passthrough). */
export interface AddressPlan {
  readonly family: Family;
  readonly cidr: string;
  readonly device: string;
}

/** An ipset the rules match against (`hash:ip`, with comments), and the members this run adds or removes. */
export interface IpsetPlan {
  readonly family: Family;
  readonly name: string;
  /** Members to add; the comment (the CNI attachment, `<containerID>/<ifname>`) lets GC find stale ones. */
  readonly add: readonly { readonly ip: string; readonly comment?: string }[];
  readonly remove: readonly string[];
}

/** Everything one run installs; derived from a Config by a pure builder. */
export interface Plan {
  /** Families that get rules, in apply order (IPv4 first). */
  readonly families: readonly Family[];
  readonly rules: readonly Rule[];
  readonly ipRules: readonly IpRulePlan[];
  readonly routes: readonly LocalRoutePlan[];
  readonly addresses: readonly AddressPlan[];
  readonly ipsets: readonly IpsetPlan[];
  /**
   * Which chains are ours. In a pod namespace every ISTIO_* chain is (absent here); in the node's namespace
   * only the chains the plan names, so nothing else that happens to start with ISTIO_ is ever touched.
   */
  readonly ownedChains?: readonly string[];
}

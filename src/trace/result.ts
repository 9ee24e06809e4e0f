import type { Family } from '../model/cidr.js';
import type { Table } from '../model/rule.js';

/** One line of the walk: a rule that matched (or a policy that decided), with its purpose when it is ours. */
export interface Step {
  /** iptables' table name, or an nft table as `inet istio-proxy-nat`. */
  readonly table: Table | string;
  readonly chain: string;
  /** The rule as iptables-save prints it (`-A CHAIN …`), or `-P CHAIN POLICY` for a policy. */
  readonly rule: string;
  /** The rule's 1-based position in its chain (none for a policy), so a picture can find the rule drawn. */
  readonly position?: number;
  readonly purpose?: string;
}

export type Verdict =
  | { readonly k: 'redirect'; readonly port: number }
  | { readonly k: 'tproxy'; readonly port: number }
  | { readonly k: 'pass'; readonly to?: string }
  | { readonly k: 'drop' }
  | { readonly k: 'unknown'; readonly table: Table | string; readonly chain: string; readonly rule: string; readonly reason: string };

export interface TraceResult {
  readonly family: Family;
  readonly verdict: Verdict;
  readonly path: readonly Step[];
}

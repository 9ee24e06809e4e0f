import type { Cidr, Family } from '../model/cidr.js';
import type { Clause, Table, Target } from '../model/rule.js';

/**
 * What the save-text parser reads that the model never emits (foreign rules, ranges, negations the model has
 * no field for). A rule made only of model clauses and a model target is exactly a model rule.
 */
export type ExtraClause =
  | { readonly k: 'comment'; readonly text: string }
  | { readonly k: 'proto-other'; readonly not: boolean; readonly proto: string }
  | { readonly k: 'port-range'; readonly dir: 'dport' | 'sport'; readonly not: boolean; readonly from: number; readonly to: number }
  | { readonly k: 'ports'; readonly dir: 'dport' | 'sport' | 'any'; readonly not: boolean; readonly ranges: readonly (readonly [number, number])[] }
  | { readonly k: 'owner-range'; readonly kind: 'uid' | 'gid'; readonly not: boolean; readonly from: number; readonly to: number }
  | { readonly k: 'socket-exists-not' }
  | { readonly k: 'set-match'; readonly not: boolean; readonly name: string; readonly dirs: readonly ('src' | 'dst')[] }
  | { readonly k: 'state'; readonly not: boolean; readonly states: readonly string[] }
  | { readonly k: 'tcp-flags'; readonly not: boolean; readonly mask: readonly string[]; readonly comp: readonly string[] }
  /** nft's `ip …` / `ip6 …` in an `inet` table: the rule matches only packets of that family. */
  | { readonly k: 'nfproto'; readonly family: Family }
  /** A match module (or option) the parser does not understand: kept as its tokens. */
  | { readonly k: 'foreign'; readonly module: string; readonly tokens: readonly string[] };

export type InspectedClause = Clause | ExtraClause;

export type ExtraTarget =
  /** No `-j`: the rule only counts packets. */
  | { readonly k: 'none' }
  | { readonly k: 'goto'; readonly chain: string }
  | { readonly k: 'reject' }
  | { readonly k: 'masquerade' }
  | { readonly k: 'dnat'; readonly addr: Cidr | undefined; readonly port: number | undefined }
  /** LOG, NFLOG, TRACE: no effect on the packet. */
  | { readonly k: 'observe'; readonly name: string }
  /** nft's `notrack`: the connection is untracked, so no nat chain sees it. */
  | { readonly k: 'notrack' }
  /** A target (or target option) the parser does not understand. */
  | { readonly k: 'other'; readonly name: string; readonly tokens: readonly string[] };

export type InspectedTarget = Target | ExtraTarget;

/** One rule as the kernel holds it, with the text iptables-save printed for it. */
export interface ParsedRule {
  readonly family: Family;
  readonly table: Table;
  readonly chain: string;
  /** 1-based position in its chain. */
  readonly position: number;
  readonly match: readonly InspectedClause[];
  readonly target: InspectedTarget;
  /** The match and target tokens as printed (after `-A CHAIN`), joined by single spaces. */
  readonly spec: string;
  /** The whole rule as its source printed it, when that is not `-A CHAIN spec` (an nft rule line). */
  readonly printed?: string;
}

/** An nft base chain's hook line: where the kernel enters it, and in which order. */
export interface BaseHook {
  readonly type: string;
  readonly hook: string;
  readonly priority: number;
}

export interface ParsedChain {
  readonly name: string;
  /** ACCEPT / DROP for builtin chains; undefined for user chains (`-`). */
  readonly policy: string | undefined;
  /** An nft base chain's hook (iptables' builtin chains are known by name). */
  readonly base?: BaseHook;
}

export interface ParsedTable {
  readonly family: Family;
  readonly table: Table;
  /** How trace names the table when it is not iptables' own: `inet istio-proxy-nat`. */
  readonly label?: string;
  readonly chains: readonly ParsedChain[];
  readonly rules: readonly ParsedRule[];
}

/** Every table of every family a save text holds, in the order printed. */
export interface Ruleset {
  readonly tables: readonly ParsedTable[];
  /** Lines the parser could not place (`line N: …`). */
  readonly problems: readonly string[];
}

export function tableOf(rs: Ruleset, family: Family, table: Table): ParsedTable | undefined {
  return rs.tables.find((t) => t.family === family && t.table === table);
}

export function ruleText(r: ParsedRule): string {
  return r.printed ?? `-A ${r.chain} ${r.spec}`.trimEnd();
}

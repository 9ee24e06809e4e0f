import { parseHostAddress } from '../model/cidr.js';
import type { AddressPlan, IpRulePlan, LocalRoutePlan } from '../model/plan.js';
import type { Family } from '../model/rule.js';

/**
 * The routing vocabulary both ways of reading and changing it share (src/exec/routes-ip.ts: `ip -batch`;
 * src/exec/routes-netlink.ts: rtnetlink in-process): what a family holds, the changes routes.ts decides.
 */

/** One `ip rule` as either reader sees it. */
export interface SeenRule {
  readonly table: number;
  readonly priority: number;
  readonly fwmark?: number;
  readonly fwmask?: number;
}

/** What one family's routing holds, as far as the plan's routing is concerned. */
export interface SeenRouting {
  readonly rules: readonly SeenRule[];
  /** The tables that hold `local default dev lo`. */
  readonly localDefault: ReadonlySet<number>;
  /** lo's addresses, as addressKey spells them. */
  readonly loAddresses: ReadonlySet<string>;
}

export type RoutingChange =
  | { readonly kind: 'rule'; readonly op: 'add' | 'del'; readonly rule: IpRulePlan }
  | { readonly kind: 'route'; readonly op: 'replace' | 'del'; readonly route: LocalRoutePlan }
  | { readonly kind: 'address'; readonly op: 'replace' | 'del'; readonly address: AddressPlan };

/** How one family's routing is read (`tables`: the routing tables the caller asks about) and changed, in order. */
export interface RoutingAccess {
  read(family: Family, tables: readonly number[]): Promise<SeenRouting>;
  change(family: Family, changes: readonly RoutingChange[]): Promise<void>;
}

export const hex = (n: number) => `0x${n.toString(16)}`;
export const ALL = { ipv4: '0.0.0.0/0', ipv6: '::/0' } as const;

export const NO_MASK = 0xffffffff;

/** `fwmark 0x539[/0xfff] [priority N] lookup T`: the rule as `ip rule` takes it and errors name it. */
export function ruleSelector(r: IpRulePlan): string {
  const mark = r.mask === undefined ? hex(r.mark) : `${hex(r.mark)}/${hex(r.mask)}`;
  return `fwmark ${mark}${r.priority === undefined ? '' : ` priority ${r.priority}`} lookup ${r.table}`;
}

/** A change as the `ip -batch` line that makes it (errors name netlink requests by it too). */
export function describeChange(family: Family, c: RoutingChange): string {
  if (c.kind === 'rule') return `rule ${c.op} ${ruleSelector(c.rule)}`;
  if (c.kind === 'route') return `route ${c.op} local ${ALL[family]} dev lo table ${c.route.table}`;
  return `address ${c.op} ${c.address.cidr} dev ${c.address.device}`;
}

/** An address by its bytes and prefix length, whatever its spelling (`::6`, `0:0::6`); the text itself if it is none. */
export function addressKey(address: string, prefix: number): string {
  const parsed = parseHostAddress(address);
  return parsed.ok ? `${parsed.value.bytes.join('.')}/${prefix}` : `${address}/${prefix}`;
}

import type { ParsedRule, ParsedTable } from '../inspect/types.js';
import { ruleText } from '../inspect/types.js';
import { evaluateMatch } from './match.js';
import { LOOPBACK, type Packet, type TraceEnv } from './packet.js';
import type { Step, Verdict } from './result.js';

/** How one table's hook ended, and the packet as it leaves it. */
export type HookOutcome =
  | { readonly k: 'accept'; readonly packet: Packet; readonly capture?: Verdict }
  | { readonly k: 'drop'; readonly packet: Packet }
  | { readonly k: 'unknown'; readonly verdict: Verdict };

export interface HookContext {
  readonly table: ParsedTable;
  /** The kernel hook, as iptables names it (`OUTPUT`). */
  readonly hook: string;
  /** The chain the hook enters, when it is not named after the hook (an nft base chain). */
  readonly entry?: string;
  readonly env: TraceEnv;
  readonly purposeOf: (r: ParsedRule) => string | undefined;
  readonly record: (s: Step) => void;
}

const MAX_STEPS = 10_000;

const tableName = (t: ParsedTable): string => t.label ?? t.table;

function unknownAt(r: ParsedRule, ctx: HookContext, reason: string): HookOutcome {
  return { k: 'unknown', verdict: { k: 'unknown', table: tableName(ctx.table), chain: r.chain, rule: ruleText(r), reason } };
}

const xmark = (value: number, mark: number, mask: number) => ((value & ~mask) ^ mark) >>> 0;

type Effect = { k: 'continue'; packet: Packet } | { k: 'enter'; chain: string; goto: boolean; packet: Packet } | { k: 'return'; packet: Packet } | HookOutcome;

/** A target's effect on the packet and on the walk. */
function applyTarget(r: ParsedRule, p: Packet, ctx: HookContext): Effect {
  const t = r.target;
  const chains = new Set(ctx.table.chains.map((c) => c.name));
  switch (t.k) {
    case 'jump':
      if (t.chain === 'ACCEPT') return { k: 'accept', packet: p };
      if (t.chain === 'DROP') return { k: 'drop', packet: p };
      if (t.chain === 'RETURN') return { k: 'return', packet: p };
      return chains.has(t.chain) ? { k: 'enter', chain: t.chain, goto: false, packet: p } : unknownAt(r, ctx, `chain ${t.chain} does not exist`);
    case 'goto':
      return chains.has(t.chain) ? { k: 'enter', chain: t.chain, goto: true, packet: p } : unknownAt(r, ctx, `chain ${t.chain} does not exist`);
    case 'reject':
      return { k: 'drop', packet: p };
    case 'redirect': {
      // In OUTPUT the kernel redirects to the loopback address; in PREROUTING to the arriving device's address.
      const dst = ctx.hook === 'OUTPUT' ? LOOPBACK[p.family] : p.dst;
      const packet = { ...p, dst, dport: t.port, natted: { ...p.natted, dnat: true }, outIface: ctx.hook === 'OUTPUT' ? 'lo' : p.outIface };
      return { k: 'accept', packet, capture: { k: 'redirect', port: t.port } };
    }
    case 'dnat': {
      const to = `${t.addr?.text.replace(/\/[0-9]+$/, '') ?? 'same address'}${t.port === undefined ? '' : ` port ${t.port}`}`;
      const packet = { ...p, dst: t.addr?.bytes ?? p.dst, dport: t.port ?? p.dport, natted: { ...p.natted, dnat: true } };
      return { k: 'accept', packet, capture: { k: 'pass', to } };
    }
    case 'snat':
    case 'masquerade':
      return { k: 'accept', packet: { ...p, natted: { ...p.natted, snat: true } } };
    case 'tproxy': {
      const packet = { ...p, mark: xmark(p.mark, t.mark, t.mask) };
      return { k: 'accept', packet, capture: { k: 'tproxy', port: t.port === 0 ? p.dport : t.port } };
    }
    case 'set-mark':
      return { k: 'continue', packet: { ...p, mark: xmark(p.mark, t.mark, t.mask ?? 0xffffffff) } };
    case 'connmark':
      return { k: 'continue', packet: t.op === 'save' ? { ...p, ctmark: p.mark } : { ...p, mark: p.ctmark } };
    case 'connmark-set':
      return { k: 'continue', packet: { ...p, ctmark: xmark(p.ctmark, t.mark, t.mask) } };
    case 'notrack':
      return { k: 'continue', packet: { ...p, untracked: true } };
    case 'ct-zone':
    case 'observe':
    case 'none':
      return { k: 'continue', packet: p };
    case 'other':
      return unknownAt(r, ctx, `target ${t.name} is not one trace can follow`);
  }
}

/**
 * Walks one table's builtin chain for one hook as the kernel does: rules in order, jumps and gotos into user
 * chains, RETURN and the end of a user chain back to the caller, the end of the builtin chain to its policy.
 */
export function walkHook(packet: Packet, ctx: HookContext): HookOutcome {
  const byChain = new Map<string, ParsedRule[]>();
  for (const r of ctx.table.rules) byChain.set(r.chain, [...(byChain.get(r.chain) ?? []), r]);
  const entry = ctx.entry ?? ctx.hook;
  const policy = ctx.table.chains.find((c) => c.name === entry)?.policy ?? 'ACCEPT';
  const stack: { chain: string; next: number }[] = [{ chain: entry, next: 0 }];
  let p = packet;
  const table = tableName(ctx.table);
  const endOfBuiltin = (): HookOutcome => {
    if (policy !== 'DROP') return { k: 'accept', packet: p };
    ctx.record({ table, chain: entry, rule: ctx.table.label === undefined ? `-P ${entry} DROP` : 'policy drop' });
    return { k: 'drop', packet: p };
  };
  for (let steps = 0; steps < MAX_STEPS; steps++) {
    const frame = stack[stack.length - 1];
    if (frame === undefined) return endOfBuiltin();
    const r = byChain.get(frame.chain)?.[frame.next];
    if (r === undefined) {
      stack.pop();
      if (stack.length === 0) return endOfBuiltin();
      continue;
    }
    frame.next += 1;
    const m = evaluateMatch(r.match, p, ctx.env);
    if (m === false) continue;
    // An undecidable rule ends the path too: it is the rule the verdict names.
    const purpose = ctx.purposeOf(r);
    ctx.record({ table, chain: r.chain, rule: ruleText(r), position: r.position, ...(purpose === undefined ? {} : { purpose }) });
    if (m === 'unknown') return unknownAt(r, ctx, 'it has a match trace cannot evaluate');
    const e = applyTarget(r, p, ctx);
    if (e.k === 'continue') p = e.packet;
    else if (e.k === 'enter') {
      p = e.packet;
      if (e.goto) stack.pop();
      stack.push({ chain: e.chain, next: 0 });
    } else if (e.k === 'return') {
      p = e.packet;
      stack.pop();
      if (stack.length === 0) return endOfBuiltin();
    } else return e;
  }
  return { k: 'unknown', verdict: { k: 'unknown', table, chain: entry, rule: '', reason: 'the walk did not end (a jump loop)' } };
}

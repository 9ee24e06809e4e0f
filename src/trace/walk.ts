import type { Family } from '../model/cidr.js';
import type { ParsedRule, ParsedTable } from '../inspect/types.js';
import { orderBaseChains, type BaseChain, type Hook } from './base-chains.js';
import { walkHook } from './chain-walk.js';
import type { Packet, TraceEnv } from './packet.js';
import type { Step, TraceResult, Verdict } from './result.js';

export type Direction = 'outbound' | 'inbound';

export interface Flow {
  readonly direction: Direction;
  /** The first packet, with the devices of its first hook (outbound: out device; inbound: in device). */
  readonly packet: Packet;
  /** Outbound: the destination is an address of this namespace (the packet comes back in on lo). */
  readonly local: boolean;
}

interface Leg {
  readonly hooks: readonly Hook[];
  /** A locally sent packet back in on lo: nat was decided on the way out, so no nat chain is consulted. */
  readonly nat: boolean;
}

const OUTPUT_LEG: Leg = { hooks: ['OUTPUT', 'POSTROUTING'], nat: true };
const LOOPBACK_IN_LEG: Leg = { hooks: ['PREROUTING', 'INPUT'], nat: false };
const INBOUND_LEG: Leg = { hooks: ['PREROUTING', 'INPUT'], nat: true };

interface Walked {
  readonly packet: Packet;
  readonly capture: Verdict | undefined;
  readonly end: Verdict | undefined;
}

/** A nat chain is skipped once the hook's kind of nat binding exists (the kernel stops at the first binding). */
function seesNat(c: BaseChain, p: Packet, leg: Leg): boolean {
  if (!leg.nat || p.untracked === true) return false;
  return c.hook === 'PREROUTING' || c.hook === 'OUTPUT' ? !p.natted.dnat : !p.natted.snat;
}

function walkLeg(leg: Leg, start: Packet, chains: readonly BaseChain[], env: TraceEnv, purposeOf: (r: ParsedRule) => string | undefined, path: Step[], capture0: Verdict | undefined): Walked {
  let packet = start;
  let capture = capture0;
  for (const hook of leg.hooks) {
    for (const c of chains.filter((x) => x.hook === hook)) {
      if (c.nat && !seesNat(c, packet, leg)) continue;
      const out = walkHook(packet, { table: c.table, hook, entry: c.entry, env, purposeOf, record: (s) => path.push(s) });
      if (out.k === 'unknown') return { packet, capture, end: out.verdict };
      packet = out.packet;
      if (out.k === 'drop') return { packet, capture, end: { k: 'drop' } };
      // A socket TPROXY picked is kept whatever nat does afterwards.
      if (out.capture !== undefined && capture?.k !== 'tproxy') capture = out.capture;
    }
  }
  return { packet, capture, end: undefined };
}

/**
 * The kernel's walk of a new connection's first packet through every hook, entering each hook's chains in
 * priority order (iptables' tables and native nft base chains alike: an accept ends one chain, a drop all),
 * over one family's rules: outbound through OUTPUT and POSTROUTING and, for a local destination (or after a
 * REDIRECT), back in on lo; inbound through PREROUTING and INPUT. Pure.
 */
export function traceFlow(flow: Flow, tables: readonly ParsedTable[], env: TraceEnv, purposeOf: (r: ParsedRule) => string | undefined = () => undefined): TraceResult {
  const family: Family = flow.packet.family;
  const chains = orderBaseChains(tables, family);
  const path: Step[] = [];
  const finish = (w: Walked): TraceResult => ({ family, path, verdict: w.end ?? w.capture ?? { k: 'pass' } });
  if (flow.direction === 'inbound') return finish(walkLeg(INBOUND_LEG, flow.packet, chains, env, purposeOf, path, undefined));
  const out = walkLeg(OUTPUT_LEG, flow.packet, chains, env, purposeOf, path, undefined);
  const local = flow.local || out.capture?.k === 'redirect';
  if (out.end !== undefined || !local) return finish(out);
  const back = { ...out.packet, inIface: 'lo', outIface: '', owner: undefined };
  return finish(walkLeg(LOOPBACK_IN_LEG, back, chains, env, purposeOf, path, out.capture));
}

import type { Family } from '../model/cidr.js';
import type { Table } from '../model/rule.js';
import type { ParsedRule, ParsedTable } from '../inspect/types.js';
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

type Hook = readonly [Table, string];

/** Outbound: local output, then postrouting. */
const OUTPUT_PATH: readonly Hook[] = [['raw', 'OUTPUT'], ['mangle', 'OUTPUT'], ['nat', 'OUTPUT'], ['filter', 'OUTPUT'], ['mangle', 'POSTROUTING'], ['nat', 'POSTROUTING']];
/** A locally sent packet back in on lo: nat was decided on the way out, so nat PREROUTING/INPUT are not consulted. */
const LOOPBACK_IN_PATH: readonly Hook[] = [['raw', 'PREROUTING'], ['mangle', 'PREROUTING'], ['mangle', 'INPUT'], ['filter', 'INPUT']];
/** A packet arriving for a local address. */
const INBOUND_PATH: readonly Hook[] = [['raw', 'PREROUTING'], ['mangle', 'PREROUTING'], ['nat', 'PREROUTING'], ['mangle', 'INPUT'], ['nat', 'INPUT'], ['filter', 'INPUT']];

interface Walked {
  readonly packet: Packet;
  readonly capture: Verdict | undefined;
  readonly end: Verdict | undefined;
}

function walkPath(hooks: readonly Hook[], start: Packet, tables: readonly ParsedTable[], env: TraceEnv, purposeOf: (r: ParsedRule) => string | undefined, path: Step[], capture0: Verdict | undefined): Walked {
  let packet = start;
  let capture = capture0;
  for (const [name, hook] of hooks) {
    const table = tables.find((t) => t.table === name && t.family === start.family);
    if (table === undefined) continue;
    const out = walkHook(packet, { table, hook, env, purposeOf, record: (s) => path.push(s) });
    if (out.k === 'unknown') return { packet, capture, end: out.verdict };
    packet = out.packet;
    if (out.k === 'drop') return { packet, capture, end: { k: 'drop' } };
    // A socket TPROXY picked is kept whatever nat does afterwards.
    if (out.capture !== undefined && capture?.k !== 'tproxy') capture = out.capture;
  }
  return { packet, capture, end: undefined };
}

/**
 * The kernel's walk of a new connection's first packet through every hook and table, in the kernel's order,
 * over one family's rules: outbound through OUTPUT and POSTROUTING and, for a local destination (or after a
 * REDIRECT), back in on lo; inbound through PREROUTING and INPUT. Pure.
 */
export function traceFlow(flow: Flow, tables: readonly ParsedTable[], env: TraceEnv, purposeOf: (r: ParsedRule) => string | undefined = () => undefined): TraceResult {
  const family: Family = flow.packet.family;
  const path: Step[] = [];
  const finish = (w: Walked): TraceResult => ({ family, path, verdict: w.end ?? w.capture ?? { k: 'pass' } });
  if (flow.direction === 'inbound') return finish(walkPath(INBOUND_PATH, flow.packet, tables, env, purposeOf, path, undefined));
  const out = walkPath(OUTPUT_PATH, flow.packet, tables, env, purposeOf, path, undefined);
  const local = flow.local || out.capture?.k === 'redirect';
  if (out.end !== undefined || !local) return finish(out);
  const back = { ...out.packet, inIface: 'lo', outIface: '', owner: undefined };
  return finish(walkPath(LOOPBACK_IN_PATH, back, tables, env, purposeOf, path, out.capture));
}

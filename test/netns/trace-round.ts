/**
 * One round of a trace differential suite, shared by the iptables and the native nftables suites: listeners up,
 * the config applied for real, a dump taken, every flow made for real, and `meshcap trace` (live, from the
 * dump, and a few through the built executable) compared with where each connection landed; and each flow
 * drawn from the dump (`--format dot`, laid out by Debian's Graphviz) must show the dump's text walk, step for step.
 */
import { writeFileSync } from 'node:fs';
import { PodTopology } from '../helpers/topology.js';
import type { TraceFlowCase } from './trace-configs.js';
import { mapLimited } from '../../src/exec/limit.js';
import { drawnSteps, layOutAll } from '../helpers/graph.js';
import { connectAll, landingOf, predictedLanding, startListeners, traceArgs, traceInProcess, tracePictureInProcess, traceProcess, type TraceJson } from './trace-harness.js';

export interface Row {
  readonly flow: string;
  readonly kernel: string;
  readonly trace: readonly string[];
  readonly ok: boolean;
  /** The trace picture from the dump (`--format dot`, laid out by Graphviz) shows the dump's text walk, step for step. */
  readonly drawn?: boolean;
  readonly path?: readonly string[];
}

export interface RoundSpec {
  readonly flows: readonly TraceFlowCase[];
  readonly apply: (t: PodTopology) => Promise<void>;
  /** The namespace's rules as text, written to `file` for `trace --rules` (none: live traces only). */
  readonly dump?: { readonly read: (t: PodTopology) => Promise<string>; readonly file: string };
  /** Flows also traced through the built executable. */
  readonly processFlows: number;
  /** Called with the disagreements while the namespace still exists (a second witness may look). */
  readonly explain?: (t: PodTopology, wrong: Row[]) => Promise<void>;
}

export interface RoundResult {
  readonly rows: readonly Row[];
  readonly live: readonly TraceJson[];
}

/** Runs one round in a fresh pod topology, destroyed afterwards even on failure. */
export async function runTraceRound(spec: RoundSpec): Promise<RoundResult> {
  const t = await PodTopology.create();
  try {
    await startListeners(t);
    await spec.apply(t);
    const { flows, dump } = spec;
    if (dump !== undefined) writeFileSync(dump.file, await dump.read(t));
    const observed = (await connectAll(t, flows)).map(landingOf);
    const live = await mapLimited(flows, 4, (f) => traceInProcess(traceArgs(f, ['--netns', t.pod.path], false)));
    const fromDump = dump === undefined ? [] : await mapLimited(flows, 4, (f) => traceInProcess(traceArgs(f, ['--rules', dump.file], true)));
    const viaProcess = await mapLimited(flows.slice(0, spec.processFlows), 2, (f) => traceProcess(traceArgs(f, ['--netns', t.pod.path], false)));
    const dots = dump === undefined ? [] : await mapLimited(flows, 4, (f) => tracePictureInProcess(traceArgs(f, ['--rules', dump.file], true)));
    const pictures = (await layOutAll(dots)).map(drawnSteps);
    const rows = flows.map((f, i): Row => {
      const want = observed[i] ?? 'missing';
      const guesses = [live[i], fromDump[i], viaProcess[i]].filter((x) => x !== undefined).map((x) => predictedLanding(f, x));
      const walk = fromDump[i]?.path.map((s) => `${s.table} ${s.chain}: ${s.rule}`);
      const drawn = dump === undefined ? {} : { drawn: JSON.stringify(pictures[i]) === JSON.stringify(walk) };
      const ok = guesses.length >= (dump === undefined ? 1 : 2) && guesses.every((g) => g === want) && drawn.drawn !== false;
      return { flow: `${f.direction} ${f.sender.name} -> ${f.dst}:${f.dport}`, kernel: want, trace: guesses, ok, ...drawn, ...(ok ? {} : { path: live[i]?.path.map((s) => `${s.table} ${s.chain}: ${s.rule}`) ?? [] }) };
    });
    const wrong = rows.filter((r) => !r.ok);
    if (wrong.length > 0 && spec.explain !== undefined) await spec.explain(t, wrong);
    return { rows, live };
  } finally {
    await t.destroy();
  }
}

/** `redirect 15001: 12, pass: 30` — the verdict mix, to show the flows exercised more than one path. */
export function countVerdicts(into: Map<string, number>, live: readonly TraceJson[]): void {
  for (const v of live) {
    const key = `${v.verdict}${v.port === undefined ? '' : ` ${v.port}`}`;
    into.set(key, (into.get(key) ?? 0) + 1);
  }
}

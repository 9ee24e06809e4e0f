import { readFileSync } from 'node:fs';
import { loadTraceOptions, type TraceFlags, type TraceOptions } from '../config/trace.js';
import { LOOPBACK, inCidr, type Packet } from '../trace/packet.js';
import { traceFlow, type Flow } from '../trace/walk.js';
import { describeVerdict, formatTrace, formatTraceJson, type Layout } from '../trace/describe.js';
import { detectLayout } from '../inspect/capture-layout.js';
import { cidr } from '../model/cidr.js';
import { formatAddress } from '../render/inet.js';
import { buildPurposeLookup } from './trace-purposes.js';
import { readDump, readLive, type Sources } from './trace-sources.js';
import type { CliDeps } from './run.js';

const LOOPBACK_NETS = { ipv4: cidr('127.0.0.0/8'), ipv6: cidr('::1/128') } as const;

/** The first packet and where it goes, from the options and (live) the route the namespace picks. */
function describeFlow(o: TraceOptions, s: Sources): Flow {
  const loop = inCidr(o.dst.bytes, LOOPBACK_NETS[o.dst.family]);
  const outIface = o.outIface ?? s.route?.dev ?? (loop ? 'lo' : 'eth0');
  const local = s.route !== undefined && o.outIface === undefined ? s.route.local || s.route.dev === 'lo' : outIface === 'lo';
  const outboundSrc = o.src ?? s.route?.src ?? (loop ? { ...LOOPBACK_NETS[o.dst.family], bytes: LOOPBACK[o.dst.family] } : undefined);
  const inbound = o.direction === 'inbound';
  const packet: Packet = {
    family: o.dst.family,
    proto: o.proto,
    src: (inbound ? o.src : outboundSrc)?.bytes,
    dst: o.dst.bytes,
    sport: o.sport,
    dport: o.dport,
    owner: inbound ? undefined : { uid: o.uid, gid: o.gid },
    mark: inbound ? 0 : o.mark,
    ctmark: 0,
    inIface: inbound ? (o.inIface ?? 'eth0') : '',
    outIface: inbound ? '' : outIface,
    natted: { dnat: false, snat: false },
  };
  return { direction: o.direction, packet, local: !inbound && local };
}

function headerOf(flow: Flow): string {
  const p = flow.packet;
  const host = (b: readonly number[] | undefined) => (b === undefined ? 'any' : formatAddress(b));
  const who = flow.direction === 'outbound' ? ` uid ${p.owner?.uid ?? 0} gid ${p.owner?.gid ?? 0} mark 0x${p.mark.toString(16)} out ${p.outIface}${flow.local ? ' (local destination)' : ''}` : ` in ${p.inIface}`;
  return `${p.family} ${flow.direction} ${p.proto} ${host(p.src)} -> ${host(p.dst)} port ${p.dport}${who}`;
}

/** `meshcap trace`: exit 0 whatever the verdict; 2 bad input; 5 no such namespace. */
export async function runTrace(flags: TraceFlags, deps: CliDeps & { readonly stdin?: () => string }): Promise<void> {
  const o = loadTraceOptions(flags);
  const sources: Sources =
    o.source.k === 'rules'
      ? readDump(o.source.file, o.dst.family, deps.stdin ?? (() => readFileSync(0, 'utf8')))
      : await readLive(o, o.source.path, deps);
  const flow = describeFlow(o, sources);
  const layout: Layout = detectLayout(sources.tables) === 'sidecar' ? 'sidecar' : 'ambient';
  const purposeOf = buildPurposeLookup(layout);
  const result = traceFlow(flow, sources.tables, { sets: sources.sets }, purposeOf);
  if (o.picture !== undefined) {
    const [{ buildRuleGraph }, { overlayWalk }, { drawGraph }] = await Promise.all([import('../graph/build.js'), import('../graph/walk-overlay.js'), import('../graph/draw.js')]);
    const graph = overlayWalk(buildRuleGraph(sources.tables, purposeOf), result, [headerOf(flow), `verdict: ${describeVerdict(result, flow.packet, layout)}`]);
    deps.stdout.write(await drawGraph(graph, o.picture));
  } else if (o.json) {
    deps.stdout.write(formatTraceJson(result));
    for (const note of sources.notes.filter((n) => n.startsWith('note:'))) deps.stderr.write(`meshcap: ${note}\n`);
  } else deps.stdout.write(formatTrace(result, flow.packet, layout, [...sources.notes, headerOf(flow)].join('\n')));
}

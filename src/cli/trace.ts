import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, EnvironmentError } from '../errors.js';
import { loadTraceOptions, type TraceFlags, type TraceOptions } from '../config/trace.js';
import { LOOPBACK, inCidr, type Packet } from '../trace/packet.js';
import { traceFlow, type Flow } from '../trace/walk.js';
import { formatTrace, formatTraceJson, type Layout } from '../trace/describe.js';
import { detectLayout } from '../inspect/capture-layout.js';
import { parseSaveText } from '../inspect/save-text.js';
import type { ParsedTable, Ruleset } from '../inspect/types.js';
import { cidr, type Cidr } from '../model/cidr.js';
import { formatAddress } from '../render/inet.js';
import type { Runner } from '../exec/runner.js';
import { buildPurposeLookup } from './trace-purposes.js';
import type { CliDeps } from './run.js';

const LOOPBACK_NETS = { ipv4: cidr('127.0.0.0/8'), ipv6: cidr('::1/128') } as const;

/** What the walk needs besides the packet: the family's tables, sets, and the route the kernel would pick. */
interface Sources {
  readonly tables: readonly ParsedTable[];
  readonly sets: ReadonlyMap<string, readonly Cidr[]> | undefined;
  readonly route: { readonly dev: string; readonly src: Cidr | undefined; readonly local: boolean } | undefined;
  readonly notes: readonly string[];
}

function readDump(file: string, stdin: () => string): Ruleset {
  let text: string;
  try {
    text = file === '-' ? stdin() : readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('--rules', file, `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const rs = parseSaveText(text);
  if (rs.problems.length > 0) throw new ConfigError('--rules', file, `is not iptables-save output: ${rs.problems[0]}`);
  if (rs.tables.length === 0) throw new ConfigError('--rules', file, 'holds no *filter/*nat/*mangle/*raw table');
  return rs;
}

function setNames(tables: readonly ParsedTable[]): string[] {
  const names = tables.flatMap((t) => t.rules.flatMap((r) => r.match.flatMap((c) => (c.k === 'set' ? [typeof c.name === 'string' ? c.name : ''] : c.k === 'set-match' ? [c.name] : []))));
  return [...new Set(names)];
}

async function readLive(o: TraceOptions, netns: string | undefined, deps: CliDeps): Promise<Sources> {
  if (netns !== undefined && !existsSync(netns)) throw new EnvironmentError(`network namespace ${netns} does not exist (--netns)`);
  const [{ createSpawnRunner }, live, reader] = await Promise.all([import('../exec/spawn-runner.js'), import('../inspect/live.js'), import('../inspect/namespace-rules.js')]);
  const runner: Runner = (deps.makeRunner ?? createSpawnRunner)(netns);
  const { rules, alsoHeld } = reader.walkedRules(await reader.readNamespaceRules(runner, { families: [o.dst.family], nftTables: false }), o.dst.family);
  const tables = rules.tables.filter((t) => t.family === o.dst.family);
  const notes = [`rules: ${rules.backend} backend`];
  if (alsoHeld !== undefined) notes.push(`note: the ${alsoHeld} backend holds rules as well; the kernel runs both, this walk covers ${rules.backend}'s`);
  const [sets, route] = await Promise.all([live.readSetMembers(runner, setNames(tables)), o.direction === 'outbound' ? live.routeGet(runner, formatAddress(o.dst.bytes), o.mark, o.uid) : undefined]);
  return { tables, sets, route, notes };
}

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
      ? { tables: readDump(o.source.file, deps.stdin ?? (() => readFileSync(0, 'utf8'))).tables.filter((t) => t.family === o.dst.family), sets: undefined, route: undefined, notes: [] }
      : await readLive(o, o.source.path, deps);
  const flow = describeFlow(o, sources);
  const layout: Layout = detectLayout(sources.tables) === 'sidecar' ? 'sidecar' : 'ambient';
  const result = traceFlow(flow, sources.tables, { sets: sources.sets }, buildPurposeLookup(layout));
  if (o.json) {
    deps.stdout.write(formatTraceJson(result));
    for (const note of sources.notes.filter((n) => n.startsWith('note:'))) deps.stderr.write(`meshcap: ${note}\n`);
  } else deps.stdout.write(formatTrace(result, flow.packet, layout, [...sources.notes, headerOf(flow)].join('\n')));
}

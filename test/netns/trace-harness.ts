/**
 * The trace differential suite's moving parts: listeners that report where a connection landed, one batch
 * client per namespace for the real connections, and `meshcap trace` (in-process, over the real runner, live
 * and from the namespace's iptables-save dump) for the predictions.
 */
import { execa } from 'execa';
import { resolve } from 'node:path';
import { runMeshcap } from '../../src/cli/run.js';
import { nodeHost } from '../../src/config/host.js';
import { createSpawnRunner } from '../../src/exec/spawn-runner.js';
import type { Netns } from '../helpers/netns.js';
import { REPO_ROOT, entryCommand } from '../helpers/paths.js';
import { ROOT, PROXY, type PodTopology } from '../helpers/topology.js';
import { APP_PORTS, CAPTURE_PORTS, FLOW_PORTS, type TraceConfig, type TraceFlowCase } from './trace-configs.js';

const FLOWS = resolve(REPO_ROOT, 'test', 'fixtures', 'tcp_flows.py');

/** Capture listeners (transparent, so TPROXY finds them) in the pod; the app and the peer on every other port used. */
export async function startListeners(t: PodTopology): Promise<void> {
  await Promise.all([
    t.serve(t.pod, { ...PROXY, caps: ['net_admin'] }, 'proxy', CAPTURE_PORTS, { transparent: true }),
    t.serve(t.pod, ROOT, 'app', APP_PORTS),
    t.serve(t.peer, ROOT, 'peer', FLOW_PORTS),
  ]);
}

/** Applies a config with one iptables backend, or (`native`) as native nftables tables. */
export async function applyConfig(t: PodTopology, cfg: TraceConfig, backend: 'nft' | 'legacy' | 'native'): Promise<void> {
  const r = await t.meshcap([...cfg.args, ...(backend === 'native' ? ['--native-nftables'] : ['--force-iptables-binary', backend])]);
  if (r.exitCode !== 0) throw new Error(`meshcap ${cfg.title} exited ${r.exitCode}: ${r.stderr}`);
}

/** Where a connection landed: `pod 15001 203.0.113.10 9000` (namespace, listening port, original destination), or ERROR. */
export function landingOf(answer: string): string {
  const [name, port, origIp, origPort] = answer.split(' ');
  if (name === undefined || name === 'ERROR' || port === undefined) return 'ERROR';
  return `${name === 'peer' ? 'peer' : 'pod'} ${port} ${origIp} ${origPort}`;
}

/** Makes every flow for real, one batch client in the pod (outbound) and one in the peer (inbound). */
export async function connectAll(t: PodTopology, flows: readonly TraceFlowCase[]): Promise<string[]> {
  const line = (f: TraceFlowCase) => `${f.dst} ${f.dport} ${f.sender.uid} ${f.sender.gid} ${f.sender.mark} ${f.sender.bind?.[f.family] ?? '-'}`;
  const run = async (ns: Netns, list: readonly TraceFlowCase[]) => {
    if (list.length === 0) return [];
    const r = await execa('ip', ['netns', 'exec', ns.name, '/usr/bin/python3', FLOWS, '1.5'], { input: `${list.map(line).join('\n')}\n`, reject: false });
    const out = r.stdout.split('\n');
    if (out.length !== list.length) throw new Error(`batch client in ${ns.name} answered ${out.length} lines for ${list.length} flows: ${r.stderr}`);
    return out;
  };
  const outbound = flows.filter((f) => f.direction === 'outbound');
  const inbound = flows.filter((f) => f.direction === 'inbound');
  const [o, i] = await Promise.all([run(t.pod, outbound), run(t.peer, inbound)]);
  return flows.map((f) => (f.direction === 'outbound' ? o[outbound.indexOf(f)] : i[inbound.indexOf(f)]) ?? 'ERROR');
}

export interface TraceJson {
  readonly verdict: string;
  readonly port?: number;
  readonly path: readonly { table: string; chain: string; rule: string }[];
}

/** The trace flags of a flow. With `dump` the flags the live run reads from the namespace are given explicitly. */
export function traceArgs(f: TraceFlowCase, source: readonly string[], dump: boolean): string[] {
  const s = f.sender;
  const common = ['trace', ...source, '--dst', f.dst, '--dport', String(f.dport), '--json'];
  if (f.direction === 'inbound') return [...common, '--direction', 'inbound', '--src', f.family === 'ipv4' ? '198.51.100.1' : '2001:db8:1::1', '--in-iface', 'eth0'];
  const who = ['--uid', String(s.uid), '--gid', String(s.gid), '--mark', String(s.mark)];
  const bind = s.bind?.[f.family];
  const loop = f.dst === '127.0.0.1' || f.dst === '::1';
  const src = bind ?? (loop ? f.dst : f.family === 'ipv4' ? '198.51.100.2' : '2001:db8:1::2');
  return [...common, ...who, ...(bind !== undefined || dump ? ['--src', src] : []), ...(dump ? ['--out-iface', f.local ? 'lo' : 'eth0'] : [])];
}

/** `meshcap trace` in-process, over the real runner (it enters the namespace with nsenter). */
export async function traceInProcess(args: readonly string[]): Promise<TraceJson> {
  return JSON.parse(await runInProcess(args)) as TraceJson;
}

/** The same trace drawn (`--format dot` instead of `--json`), as its DOT text. */
export function tracePictureInProcess(args: readonly string[]): Promise<string> {
  return runInProcess(args.flatMap((a) => (a === '--json' ? ['--format', 'dot'] : [a])));
}

async function runInProcess(args: readonly string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await runMeshcap(args, {
    env: {},
    host: nodeHost,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    makeRunner: (netns) => createSpawnRunner(netns),
  });
  if (code !== 0) throw new Error(`meshcap ${args.join(' ')} exited ${code}: ${stderr}`);
  return stdout;
}

/** The same through the built executable (node bundle, or the binary with MESHCAP_IMPL=bin). */
export async function traceProcess(args: readonly string[]): Promise<TraceJson> {
  const { file, args: pre } = entryCommand();
  const r = await execa(file, [...pre, ...args], { reject: false });
  if (r.exitCode !== 0) throw new Error(`meshcap ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
  return JSON.parse(r.stdout) as TraceJson;
}

/** Where the trace says the connection lands, in landingOf's terms. */
export function predictedLanding(f: TraceFlowCase, t: TraceJson): string {
  const orig = `${f.dst} ${f.dport}`;
  if (t.verdict === 'redirect' || t.verdict === 'tproxy') return `pod ${t.port} ${orig}`;
  if (t.verdict === 'pass') return `${f.local ? 'pod' : 'peer'} ${f.dport} ${orig}`;
  return t.verdict === 'drop' ? 'ERROR' : `UNKNOWN ${JSON.stringify(t)}`;
}


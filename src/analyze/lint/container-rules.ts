import { describeCode, type Code } from '../codes.js';
import type { Finding } from '../findings.js';
import type { PodContext } from './context.js';
import { resolveProbePort, type ContainerView } from './pod.js';

/** Findings about a pod's containers: ids, ports, probes, start order (MCL001–005, MCL014–019). */

type Describe = ReturnType<typeof describeCode<Code>>;

export function locate(ctx: PodContext, d: Describe, container?: string): Finding {
  const w = ctx.workload;
  return { ...d, file: w.file, line: w.line, kind: w.kind, name: w.name, ...(w.namespace === undefined ? {} : { namespace: w.namespace }), ...(container === undefined ? {} : { container }) };
}

/** Ports the sidecar listens on or reserves (operator-tools.md §1.4), and ztunnel's ports in an ambient pod. */
const SIDECAR_PORTS: ReadonlyMap<number, string> = new Map([
  [15000, 'Envoy admin'], [15001, 'outbound capture'], [15004, 'debug'], [15006, 'inbound capture'], [15008, 'HBONE tunnel'],
  [15020, 'agent status'], [15021, 'health'], [15053, 'DNS proxy'], [15090, 'Prometheus'],
]);
const ZTUNNEL_PORTS: ReadonlyMap<number, string> = new Map([
  [15001, 'outbound capture'], [15006, 'inbound capture'], [15008, 'HBONE tunnel'], [15053, 'DNS proxy'], [15080, 'local outbound'],
]);

const apps = (ctx: PodContext) => ctx.pod.containers.filter((c) => !c.proxy && !c.injected);

function checkIds(ctx: PodContext): Finding[] {
  const { proxyUid, proxyGid } = ctx.options;
  const out: Finding[] = [];
  const custom = ctx.pod.containers.find((c) => c.proxy && !c.init)?.ownUid;
  for (const c of apps(ctx).filter((x) => !x.init)) {
    if (c.uid === proxyUid) out.push(locate(ctx, describeCode('MCL001', { container: c.name, uid: c.uid }), c.name));
    else if (custom !== undefined && custom !== 0 && c.uid === custom) out.push(locate(ctx, describeCode('MCL003', { uid: custom, container: c.name }), c.name));
    if (c.gid === proxyGid) out.push(locate(ctx, describeCode('MCL002', { container: c.name, gid: c.gid }), c.name));
  }
  return out;
}

function checkPorts(ctx: PodContext): Finding[] {
  const out: Finding[] = [];
  const reserved = new Map(ctx.ambient ? [...ZTUNNEL_PORTS].map(([p, what]) => [p, `ztunnel's ${what}`]) : [...SIDECAR_PORTS].map(([p, what]) => [p, `the sidecar's ${what}`]));
  if (!ctx.ambient && !reserved.has(ctx.statusPort) && ctx.statusPort !== 0) reserved.set(ctx.statusPort, "the sidecar's agent status");
  for (const c of apps(ctx)) {
    for (const { port } of c.ports) {
      const purpose = reserved.get(port);
      if (purpose !== undefined) out.push(locate(ctx, describeCode('MCL004', { port, purpose }), c.name));
    }
  }
  return out;
}

function checkProbes(ctx: PodContext, c: ContainerView): Finding[] {
  const out: Finding[] = [];
  for (const probe of c.probes) {
    const port = resolveProbePort(c, probe.port);
    if (port === undefined) {
      out.push(locate(ctx, describeCode('MCL018', { port: String(probe.port), container: c.name }), c.name));
      continue;
    }
    if (ctx.rewriteProbes || !ctx.capturesInbound(port)) continue;
    out.push(locate(ctx, probe.type === 'httpGet' ? describeCode('MCL016', { port }) : describeCode('MCL017', { port }), c.name));
  }
  return out;
}

function checkStartOrder(ctx: PodContext): Finding[] {
  if (ctx.native) return [];
  const out: Finding[] = [];
  if (ctx.options.cni) {
    for (const c of apps(ctx).filter((x) => x.init && x.uid !== ctx.options.proxyUid)) {
      out.push(locate(ctx, describeCode('MCL014', { container: c.name, uid: ctx.options.proxyUid }), c.name));
    }
  }
  if (!ctx.hold) out.push(locate(ctx, describeCode('MCL015')));
  return out;
}

/** Findings about the pod's containers. */
export function checkContainers(ctx: PodContext): Finding[] {
  const out: Finding[] = [];
  const hostNetworkMatters = ctx.inject === 'true' || ctx.ambient;
  if (ctx.pod.hostNetwork && hostNetworkMatters) out.push(locate(ctx, describeCode('MCL005')));
  if (ctx.pod.hostNetwork) return out;
  if (ctx.ambient) return [...out, ...checkPorts(ctx)];
  if (!ctx.sidecar) return out;
  // interceptionMode NONE: a sidecar without capture rules; only its ports can still collide.
  if (ctx.interceptionMode === 'NONE') return [...out, ...checkPorts(ctx)];
  out.push(...checkIds(ctx), ...checkPorts(ctx));
  for (const c of apps(ctx)) out.push(...checkProbes(ctx, c));
  out.push(...checkStartOrder(ctx));
  if (ctx.interceptionMode === 'TPROXY') out.push(locate(ctx, describeCode('MCL019', { gid: ctx.options.proxyGid })));
  return out;
}

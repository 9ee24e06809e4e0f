import { asInteger, asRecord, asString, field, records, type Data } from './data.js';

/** The proxy container's name: a container by this name is the sidecar, never an app container. */
export const PROXY_CONTAINER = 'istio-proxy';
/** Containers the injector adds itself; not the user's init containers. */
const INJECTED_INIT = new Set(['istio-init', 'istio-validation', PROXY_CONTAINER]);

export interface ContainerPort {
  readonly port: number;
  readonly name: string | undefined;
}

export interface Probe {
  readonly type: 'httpGet' | 'tcpSocket';
  /** A number, or a port name to look up in the container's ports. */
  readonly port: number | string;
}

/** A container as capture sees it: effective ids (the container's securityContext over the pod's), ports, probes. */
export interface ContainerView {
  readonly name: string;
  readonly init: boolean;
  readonly proxy: boolean;
  /** An init container the injector adds (istio-init, istio-validation). */
  readonly injected: boolean;
  readonly uid: number | undefined;
  readonly gid: number | undefined;
  /** runAsUser set on the container itself (not inherited). */
  readonly ownUid: number | undefined;
  readonly ports: readonly ContainerPort[];
  readonly probes: readonly Probe[];
}

export interface PodView {
  readonly hostNetwork: boolean;
  readonly containers: readonly ContainerView[];
}

function portsOf(c: Data): ContainerPort[] {
  return records(c['ports']).flatMap((p) => {
    const port = asInteger(p['containerPort']);
    return port === undefined ? [] : [{ port, name: asString(p['name']) }];
  });
}

/** IntOrString: a number, a numeric string (read as the number), or a name. */
function intOrString(v: unknown): number | string | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v !== 'string' || v === '') return undefined;
  return /^[0-9]+$/.test(v) ? Number(v) : v;
}

function probesOf(c: Data): Probe[] {
  const out: Probe[] = [];
  for (const key of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    for (const type of ['httpGet', 'tcpSocket'] as const) {
      const port = intOrString(field(c, key, type, 'port'));
      if (port !== undefined) out.push({ type, port });
    }
  }
  return out;
}

function viewContainer(c: Data, init: boolean, podSc: Data | undefined): ContainerView {
  const name = asString(c['name']) ?? '<unnamed>';
  const sc = asRecord(c['securityContext']);
  const ownUid = asInteger(sc?.['runAsUser']);
  return {
    name,
    init,
    proxy: name === PROXY_CONTAINER,
    injected: init && INJECTED_INIT.has(name),
    uid: ownUid ?? asInteger(podSc?.['runAsUser']),
    gid: asInteger(sc?.['runAsGroup']) ?? asInteger(podSc?.['runAsGroup']),
    ownUid,
    ports: portsOf(c),
    probes: probesOf(c),
  };
}

/** The pod spec of a template, read for capture: containers with effective ids, ports and probes. */
export function viewPod(spec: Data): PodView {
  const podSc = asRecord(spec['securityContext']);
  return {
    hostNetwork: spec['hostNetwork'] === true,
    containers: [
      ...records(spec['initContainers']).map((c) => viewContainer(c, true, podSc)),
      ...records(spec['containers']).map((c) => viewContainer(c, false, podSc)),
    ],
  };
}

/** A probe's port as a number, or undefined when it names a port the container does not declare. */
export function resolveProbePort(c: ContainerView, port: number | string): number | undefined {
  return typeof port === 'number' ? port : c.ports.find((p) => p.name === port)?.port;
}

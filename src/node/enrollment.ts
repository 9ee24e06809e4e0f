import { parseGoBool } from '../config/values.js';
import { Annotation } from '../config/annotations.js';
import { ConfigError } from '../errors.js';
import type { NetConf } from './plugin-config.js';

/**
 * Which pods meshcap-cni touches, from the pod's annotations alone (no API server): the first rule that
 * matches wins (docs/cni-node.md, "Enrollment"). Pure: the caller logs the decision and its warnings.
 */

export const POD_ANNOTATIONS_CAPABILITY = 'io.kubernetes.cri.pod-annotations';

/** Templates whose proxy is not a capturing sidecar: `gateway` (a router), `grpc-agent` (DISABLE_ENVOY). */
const NON_CAPTURING_TEMPLATES = new Set(['gateway', 'grpc-agent']);

export interface EnrollmentInput {
  readonly mode: 'sidecar' | 'ambient';
  readonly excludeNamespaces: readonly string[];
  /** K8S_POD_NAMESPACE / K8S_POD_NAME from CNI_ARGS ('' when absent). */
  readonly namespace: string;
  readonly podName: string;
  /** The entry declares the pod-annotations capability. */
  readonly declaresCapability: boolean;
  /** The runtime's annotations: an object, `null` (a pod without annotations), or undefined (not passed). */
  readonly annotations: Readonly<Record<string, string>> | null | undefined;
}

export type Enrollment =
  | { readonly enrolled: true; readonly reason: string; readonly annotations: Readonly<Record<string, string>>; readonly warnings: readonly string[] }
  | { readonly enrolled: false; readonly reason: string; readonly warnings: readonly string[] };

/** A list of container names as the injector writes it; absent or null means none. */
const isNameList = (v: unknown): v is readonly string[] | null | undefined => v === undefined || v === null || (Array.isArray(v) && v.every((n) => typeof n === 'string'));

/**
 * The container names the injector recorded in `sidecar.istio.io/status`; a value that is not such a JSON
 * object fails ADD. Checked by hand, not by a zod schema: the plugin's fast path (cni/front.ts) decides with
 * this module before zod is loaded, and the shape is two optional lists.
 */
export function parseInjectionStatus(value: string): Set<string> {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    json = undefined;
  }
  const status = typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  const init = status?.['initContainers'];
  const containers = status?.['containers'];
  if (status === undefined || !isNameList(init) || !isNameList(containers)) {
    throw new ConfigError(`annotation ${Annotation.status}`, value.slice(0, 120), 'must be a JSON object with "containers" and "initContainers" lists of names');
  }
  return new Set([...(init ?? []), ...(containers ?? [])]);
}

const skip = (reason: string, warnings: string[] = []): Enrollment => ({ enrolled: false, reason, warnings });

function decideSidecar(ann: Readonly<Record<string, string>>): Enrollment {
  const warnings: string[] = [];
  const status = ann[Annotation.status];
  const containers = status === undefined ? undefined : parseInjectionStatus(status);
  if (containers?.has('istio-init')) return skip(`istio-init in ${Annotation.status} sets the rules itself`);
  if (containers === undefined) return skip(`no ${Annotation.status} annotation (the pod was not injected)`);
  if (!containers.has('istio-proxy')) return skip(`no istio-proxy in ${Annotation.status}`);
  const templates = (ann[Annotation.templates] ?? '').split(',').map((t) => t.trim());
  const nonCapturing = templates.find((t) => NON_CAPTURING_TEMPLATES.has(t));
  if (nonCapturing !== undefined) return skip(`${Annotation.templates} names ${nonCapturing}`);
  const inject = ann[Annotation.inject];
  if (inject !== undefined) {
    const v = parseGoBool(inject);
    if (v.ok && !v.value) return skip(`${Annotation.inject} is ${JSON.stringify(inject)}`);
    if (!v.ok) warnings.push(`ignored ${Annotation.inject}=${JSON.stringify(inject)}: not a boolean (as istio-cni does)`);
  }
  return { enrolled: true, reason: `istio-proxy in ${Annotation.status}`, annotations: ann, warnings };
}

const REDIRECTION_ACCEPTED = new Set(['enabled', 'pending']);

function decideAmbient(ann: Readonly<Record<string, string>>): Enrollment {
  if (ann[Annotation.status] !== undefined) return skip(`the pod has a sidecar (${Annotation.status})`);
  const redirection = ann[Annotation.redirection];
  if (redirection === 'disabled') return skip(`${Annotation.redirection} is "disabled"`);
  const warnings = redirection !== undefined && !REDIRECTION_ACCEPTED.has(redirection) ? [`ignored ${Annotation.redirection}=${JSON.stringify(redirection)}: not enabled, pending or disabled`] : [];
  return { enrolled: true, reason: 'the ambient network enrolls every pod it does not exclude', annotations: ann, warnings };
}

/** The decision for one ADD (or DEL/CHECK, or the node agent's sweep), first match wins. Throws (ConfigError) only for a status annotation that is not JSON. */
export function decideEnrollment(input: EnrollmentInput): Enrollment {
  const ann = input.annotations ?? {};
  if (input.namespace === '' || input.podName === '') {
    return { enrolled: true, reason: 'not a Kubernetes pod (no K8S_POD_NAMESPACE/K8S_POD_NAME): the network opts it in', annotations: ann, warnings: [] };
  }
  if (input.excludeNamespaces.includes(input.namespace)) return skip(`namespace ${input.namespace} is excluded`);
  if (input.mode === 'ambient') return decideAmbient(ann);
  if (input.annotations === undefined) {
    const why = input.declaresCapability
      ? 'the runtime passed no pod annotations'
      : `the network entry does not declare the ${POD_ANNOTATIONS_CAPABILITY} capability`;
    return skip(`${why}, so injection cannot be seen`, [`${why}: pod passes through untouched`]);
  }
  return decideSidecar(ann);
}

/** One pod under meshcap-cni's config, as the CNI plugin (CNI_ARGS, runtimeConfig) and the node agent (the CRI) see it. */
export interface PodIdentity {
  /** K8S_POD_NAMESPACE / K8S_POD_NAME ('' when absent). */
  readonly namespace: string;
  readonly name: string;
  /** The pod's annotations as the runtime hands them to the plugin: an object, `null` (none), undefined (not passed). */
  readonly annotations: Readonly<Record<string, string>> | null | undefined;
}

/** Whether the network's entry asks the runtime for the pod's annotations. */
export const declaresAnnotations = (conf: Pick<NetConf, 'capabilities'>) => conf.capabilities?.[POD_ANNOTATIONS_CAPABILITY] === true;

/** The enrollment decision for a pod under this config (throws ConfigError only for a status annotation that is not JSON). */
export function decidePodEnrollment(conf: Pick<NetConf, 'mode' | 'exclude_namespaces' | 'capabilities'>, pod: PodIdentity): Enrollment {
  return decideEnrollment({
    mode: conf.mode,
    excludeNamespaces: conf.exclude_namespaces,
    namespace: pod.namespace,
    podName: pod.name,
    declaresCapability: declaresAnnotations(conf),
    annotations: pod.annotations,
  });
}

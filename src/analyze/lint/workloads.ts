import type { ManifestDocument } from './manifests.js';
import { asRecord, asString, field, stringMap, type Data } from './data.js';

/** Where each workload kind keeps its pod template. */
const TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  Pod: [],
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

export interface ObjectMeta {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** A workload and its pod template (for a Pod, the Pod itself). */
export interface Workload {
  readonly file: string;
  readonly line: number;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string | undefined;
  /** The workload's own metadata (for a Pod, the same as the template's). */
  readonly meta: ObjectMeta;
  readonly template: ObjectMeta;
  /** The pod spec (possibly empty when the manifest lacks one). */
  readonly spec: Data;
  /** How the template's metadata is spelled for this kind: `spec.template.metadata`. */
  readonly templatePath: string;
}

export interface NamespaceObject {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface Inventory {
  readonly workloads: Workload[];
  readonly namespaces: NamespaceObject[];
}

function metaOf(obj: unknown): ObjectMeta {
  return { labels: stringMap(field(obj, 'metadata', 'labels')), annotations: stringMap(field(obj, 'metadata', 'annotations')) };
}

function collect(doc: ManifestDocument, value: unknown, into: Inventory, depth: number): void {
  const obj = asRecord(value);
  if (obj === undefined) return;
  const kind = asString(obj['kind']) ?? '';
  // `kind: List` (kubectl get -o yaml) and its typed variants (`DeploymentList`) hold items.
  if (kind.endsWith('List') && Array.isArray(obj['items']) && depth < 4) {
    for (const item of obj['items']) collect(doc, item, into, depth + 1);
    return;
  }
  const name = asString(field(obj, 'metadata', 'name')) ?? asString(field(obj, 'metadata', 'generateName')) ?? '<unnamed>';
  if (kind === 'Namespace') {
    into.namespaces.push({ name, labels: stringMap(field(obj, 'metadata', 'labels')) });
    return;
  }
  const path = TEMPLATE_PATHS[kind];
  if (path === undefined) return;
  const template = path.length === 0 ? obj : field(obj, ...path);
  into.workloads.push({
    file: doc.file,
    line: doc.line,
    kind,
    name,
    namespace: asString(field(obj, 'metadata', 'namespace')),
    meta: metaOf(obj),
    template: metaOf(template),
    spec: asRecord(field(template, 'spec')) ?? {},
    templatePath: [...path, 'metadata'].join('.'),
  });
}

/** The workloads (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob) and Namespaces of some documents; other kinds are ignored. */
export function findWorkloads(docs: readonly ManifestDocument[]): Inventory {
  const inventory: Inventory = { workloads: [], namespaces: [] };
  for (const doc of docs) collect(doc, doc.value, inventory, 0);
  return inventory;
}


import { Label } from '../../config/annotations.js';
import type { Finding } from '../findings.js';
import { checkMetadata } from './annotation-rules.js';
import { checkContainers } from './container-rules.js';
import { buildPodContext, type LintOptions } from './context.js';
import { parseManifestText } from './manifests.js';
import { findWorkloads } from './workloads.js';

export interface ManifestFile {
  readonly file: string;
  readonly text: string;
}

/**
 * `meshcap lint`: the findings of §6 for every workload in the files, in file and document order. Namespaces
 * in any of the files count for workloads in all of them. Throws ManifestSyntaxError on unreadable YAML.
 */
export function lintManifests(files: readonly ManifestFile[], options: LintOptions): Finding[] {
  const docs = files.flatMap((f) => parseManifestText(f.file, f.text));
  const inventory = findWorkloads(docs);
  const restricted = new Set(inventory.namespaces.filter((n) => n.labels[Label.podSecurityEnforce] === 'restricted').map((n) => n.name));
  return inventory.workloads.flatMap((w) => {
    const ctx = buildPodContext(w, inventory, options);
    return [...checkMetadata(ctx, w.namespace !== undefined && restricted.has(w.namespace)), ...checkContainers(ctx)];
  });
}

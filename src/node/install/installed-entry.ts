import { netConfSchema, type NetConf } from '../plugin-config.js';
import { findPrimary, isOurs } from './conf-dir.js';

/**
 * meshcap-cni's entry as the node's runtime loads it: the first config of the conf dir (as containerd picks
 * it), our entry in its plugins, read with the plugin's own schema and the list's cniVersion. Undefined with
 * the reason when there is none (or it does not parse).
 */
export function readInstalledEntry(confDir: string): { conf: NetConf; file: string } | { why: string } {
  let primary;
  try {
    primary = findPrimary(confDir);
  } catch (err) {
    return { why: `cannot read ${confDir}: ${(err as Error).message}` };
  }
  if (primary === undefined) return { why: `no CNI config in ${confDir}` };
  const entry = primary.isList ? (primary.json['plugins'] as unknown[]).find(isOurs) : undefined;
  if (entry === undefined) return { why: `no meshcap-cni entry in ${primary.path}` };
  const r = netConfSchema.safeParse({ ...(entry as object), cniVersion: typeof primary.json['cniVersion'] === 'string' ? primary.json['cniVersion'] : '1.0.0' });
  if (!r.success) return { why: `the meshcap-cni entry in ${primary.path} does not parse: ${r.error.issues[0]?.path.join('.') ?? ''} ${r.error.issues[0]?.message ?? ''}` };
  return { conf: r.data, file: primary.path };
}

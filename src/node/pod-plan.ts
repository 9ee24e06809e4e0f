import type { Host } from '../config/host.js';
import { legacyHintFromProc } from '../exec/detect.js';
import type { ExecOptions } from '../exec/apply.js';
import type { Family } from '../model/rule.js';
import { ambientOptions, finish, sidecarOptions, type PluginOptions } from './options.js';
import type { NetConf } from './plugin-config.js';

/**
 * One pod under meshcap-cni's config, as every node-side door sees it: the CNI plugin at ADD/DEL/CHECK (from
 * CNI_ARGS and runtimeConfig) and the node agent at each sweep (from the CRI). The same enrollment decision,
 * the same options, the same engine options, so a pod the agent repairs gets exactly what ADD gave it.
 */

/** The engine options for an enrolled pod's namespace: its mode's, from the config and the annotations. */
export function podOptions(conf: NetConf, annotations: Readonly<Record<string, string>>, netns: string | undefined): PluginOptions {
  const builder = conf.mode === 'sidecar' ? sidecarOptions(conf, annotations) : ambientOptions(conf, annotations);
  return finish(builder, conf.mode, conf, netns);
}

/**
 * Always converge (the plugin owns the namespace it sets up); /proc tells about legacy tables of our own
 * (the node's) namespace, and for a pod's only whether the legacy module is loaded at all.
 */
export function podExecOptions(conf: NetConf, host: Host, ownNamespace: boolean): ExecOptions {
  return {
    reconcile: true,
    forceApply: false,
    forcedBackend: conf.force_iptables_binary,
    legacyHint: (family: Family) => legacyHintFromProc(family, ownNamespace, (p) => host.readText(p)),
  };
}

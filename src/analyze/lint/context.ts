import { parse as parseYaml } from 'yaml';
import { Annotation, Label } from '../../config/annotations.js';
import { parseGoBool, parsePortList, parsePortsOrAll } from '../../config/values.js';
import { asRecord } from './data.js';
import { checkAnnotationValue, checkProxyConfig } from './annotation-values.js';
import { viewPod, type PodView } from './pod.js';
import type { BypassPolicy } from '../../config/bypass-policy.js';
import type { Inventory, Workload } from './workloads.js';

/** What the user told lint about the cluster. */
export interface LintOptions {
  readonly proxyUid: number;
  readonly proxyGid: number;
  readonly mode: 'sidecar' | 'ambient';
  readonly cni: boolean;
  /** Whether the injector uses native sidecars; `auto` assumes a kubelet ≥ 1.29, where it does. */
  readonly nativeSidecars: 'auto' | 'true' | 'false';
  /** The CNI plugin's bypass_policy: denied annotations outside its namespaces are findings (MCL022). */
  readonly bypassPolicy?: BypassPolicy;
}

export const DEFAULT_LINT_OPTIONS: LintOptions = { proxyUid: 1337, proxyGid: 1337, mode: 'sidecar', cni: false, nativeSidecars: 'auto' };

/** The default status port of the agent (ProxyConfig statusPort). */
const DEFAULT_STATUS_PORT = 15020;
/** Ports the injector always adds to excludeInboundPorts (with the status port). */
const ALWAYS_EXCLUDED_INBOUND = [15090, 15021];

/** One workload read for capture: its pod, its annotations, and the settings they make. */
export interface PodContext {
  readonly workload: Workload;
  readonly options: LintOptions;
  readonly pod: PodView;
  readonly annotations: Readonly<Record<string, string>>;
  /** The template's sidecar.istio.io/inject label or annotation ("true"/"false"), label first; undefined = namespace default. */
  readonly inject: string | undefined;
  /** Enrolled in ambient: --mode ambient or istio.io/dataplane-mode=ambient on the pod or its namespace. */
  readonly ambient: boolean;
  /** Gets a sidecar and capture rules: sidecar mode, not ambient, not opted out, not host network. */
  readonly sidecar: boolean;
  readonly interceptionMode: string;
  readonly native: boolean;
  readonly hold: boolean;
  readonly rewriteProbes: boolean;
  readonly statusPort: number;
  /** Whether inbound capture covers a port, as the injected rules would. */
  readonly capturesInbound: (port: number) => boolean;
}

function proxyConfig(annotations: Readonly<Record<string, string>>): Readonly<Record<string, unknown>> {
  const text = annotations[Annotation.proxyConfig];
  if (text === undefined || checkProxyConfig(text) !== undefined) return {};
  try {
    return asRecord(parseYaml(text, { maxAliasCount: 10, logLevel: 'error' })) ?? {};
  } catch {
    return {};
  }
}

/** An annotation's value when its grammar passes (an invalid one is reported and treated as absent). */
function valid(annotations: Readonly<Record<string, string>>, key: string, cni: boolean): string | undefined {
  const v = annotations[key];
  return v !== undefined && checkAnnotationValue(key, v, cni) === undefined ? v : undefined;
}

function isBoolText(v: string | undefined): v is 'true' | 'false' {
  return v === 'true' || v === 'false';
}

function inboundCoverage(annotations: Readonly<Record<string, string>>, mode: string, statusPort: number, cni: boolean): (port: number) => boolean {
  const inc = parsePortsOrAll(valid(annotations, Annotation.includeInboundPorts, cni) ?? '*');
  const exc = parsePortList(valid(annotations, Annotation.excludeInboundPorts, cni) ?? '');
  const include = inc.ok ? inc.value : '*';
  const exclude = [...(exc.ok ? exc.value : []), ...ALWAYS_EXCLUDED_INBOUND, statusPort];
  return (port) => {
    if (mode === 'NONE' || exclude.includes(port)) return false;
    return include === '*' || include.includes(port);
  };
}

export function buildPodContext(workload: Workload, inventory: Inventory, options: LintOptions): PodContext {
  const { annotations, labels } = workload.template;
  const pod = viewPod(workload.spec);
  const cfg = proxyConfig(annotations);
  const labelInject = labels[Label.inject];
  const annInject = annotations[Annotation.inject];
  const inject = isBoolText(labelInject) ? labelInject : isBoolText(annInject) ? annInject : undefined;
  const ns = inventory.namespaces.find((n) => n.name === workload.namespace);
  const podMode = labels[Label.dataplaneMode];
  const ambient = podMode === 'none' ? false : options.mode === 'ambient' || podMode === 'ambient' || ns?.labels[Label.dataplaneMode] === 'ambient';
  const interceptionMode = valid(annotations, Annotation.interceptionMode, options.cni) ?? (typeof cfg['interceptionMode'] === 'string' ? cfg['interceptionMode'] : 'REDIRECT');
  const nativeAnn = annotations[Annotation.nativeSidecar];
  const rewrite = parseGoBool(annotations[Annotation.rewriteAppHTTPProbers] ?? 'true');
  const statusText = valid(annotations, Annotation.statusPort, options.cni);
  const statusPort = statusText !== undefined ? Number(statusText.trim()) : typeof cfg['statusPort'] === 'number' ? cfg['statusPort'] : DEFAULT_STATUS_PORT;
  return {
    workload,
    options,
    pod,
    annotations,
    inject,
    ambient,
    sidecar: !ambient && inject !== 'false' && !pod.hostNetwork,
    interceptionMode,
    native: nativeAnn !== undefined ? nativeAnn !== 'false' : options.nativeSidecars !== 'false',
    hold: cfg['holdApplicationUntilProxyStarts'] === true,
    rewriteProbes: rewrite.ok ? rewrite.value : true,
    statusPort,
    capturesInbound: inboundCoverage(annotations, interceptionMode, statusPort, options.cni),
  };
}

import { parse as parseYaml } from 'yaml';
import type { Parsed } from '../../model/cidr.js';
import { Annotation } from '../../config/annotations.js';
import { annotationsRead, findGrammar, parseIstioCidrs, parseIstioInterfaceNames, parseIstioPorts } from '../../config/annotation-grammar.js';
import { asRecord } from './data.js';

/**
 * Annotation values checked twice: by the injection webhook's grammar (Istio's pkg/kube/inject/validate.go,
 * operator-tools.md §2.1), which decides whether the pod is admitted at all, and by the table of annotation
 * grammars the CNI plugin reads pods with (src/config/annotation-grammar.ts), which decides whether meshcap
 * accepts the value when the pod starts. The webhook shares istio-cni's port and interface rules, so both
 * verdicts use the same functions from that table. One grammar, three doors.
 */

type Check = (v: string) => string | undefined;

const reason = <T>(r: Parsed<T>): string | undefined => (r.ok ? undefined : r.reason);

/** Go's strconv.ParseUint(s, 10, bits): decimal digits only (leading zeros allowed), in range. */
function goUint(s: string, bits: 16 | 32): string | undefined {
  if (!/^[0-9]+$/.test(s)) return `${JSON.stringify(s)} is not an unsigned integer`;
  return Number(s) > 2 ** bits - 1 ? `${s} is out of range (0-${2 ** bits - 1})` : undefined;
}

/** The webhook's port list: Istio's parsePorts, which istio-cni shares (leading zeros and 0 accepted). */
const webhookPorts = (v: string) => reason(parseIstioPorts(v, false));

/** The webhook's CIDR list: istio-cni's (split on "," with no trimming; every item, an empty one too, must parse). */
const webhookCidrs = (v: string) => reason(parseIstioCidrs(v));

/** The webhook's interface list (Istio 1.30+): the rule istio-cni shares ("" accepted). */
const webhookInterfaces = (v: string) => reason(parseIstioInterfaceNames(v));

const PROXY_MODES = ['REDIRECT', 'TPROXY', 'NONE'];

/** The capture-relevant fields of a ProxyConfig (`proxy.istio.io/config`), YAML or JSON. */
export function checkProxyConfig(v: string): string | undefined {
  let doc: unknown;
  try {
    doc = parseYaml(v, { maxAliasCount: 10, logLevel: 'error' });
  } catch (e) {
    return `not YAML or JSON: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`;
  }
  if (doc === null || doc === undefined) return undefined;
  const cfg = asRecord(doc);
  if (cfg === undefined) return 'must be a ProxyConfig object';
  const mode = cfg['interceptionMode'];
  if (mode !== undefined && !PROXY_MODES.includes(String(mode))) return `interceptionMode must be one of ${PROXY_MODES.join(', ')}`;
  const hold = cfg['holdApplicationUntilProxyStarts'];
  if (hold !== undefined && typeof hold !== 'boolean') return 'holdApplicationUntilProxyStarts must be true or false';
  for (const key of ['statusPort', 'proxyAdminPort']) {
    const p = cfg[key];
    if (p !== undefined && !(typeof p === 'number' && Number.isInteger(p) && p >= 1 && p <= 65535)) return `${key} must be a port 1-65535`;
  }
  return undefined;
}

const READINESS = (v: string) => goUint(v, 32);
const wildcardOr = (check: Check): Check => (v) => (v === '*' ? undefined : check(v));

/** The annotations the injection webhook validates (pkg/kube/inject/validate.go), with its grammar. */
export const WEBHOOK_GRAMMARS: ReadonlyMap<string, Check> = new Map<string, Check>([
  [Annotation.includeOutboundIPRanges, wildcardOr(webhookCidrs)],
  [Annotation.excludeOutboundIPRanges, webhookCidrs],
  [Annotation.includeInboundPorts, wildcardOr(webhookPorts)],
  [Annotation.excludeInboundPorts, webhookPorts],
  [Annotation.excludeOutboundPorts, webhookPorts],
  [Annotation.excludeInterfaces, webhookInterfaces],
  [Annotation.kubevirtInterfaces, webhookInterfaces],
  [Annotation.rerouteVirtualInterfaces, webhookInterfaces],
  [Annotation.interceptionMode, (v) => (PROXY_MODES.includes(v) ? undefined : `must be one of ${PROXY_MODES.join(', ')}`)],
  [Annotation.statusPort, (v) => goUint(v.trim(), 16)],
  [Annotation.readinessInitialDelay, READINESS],
  [Annotation.readinessPeriod, READINESS],
  [Annotation.readinessFailureThreshold, READINESS],
  [Annotation.proxyConfig, checkProxyConfig],
]);

/** meshcap's verdict: the CNI door's grammar table (src/config/annotation-grammar.ts); a value it ignores is no problem. */
export function checkMeshcapValue(key: string, value: string, mode: 'sidecar' | 'ambient' = 'sidecar'): string | undefined {
  const g = findGrammar(mode, key);
  if (g === undefined || g.onBad === 'ignore') return undefined;
  return reason(g.read(value));
}

export interface ValueProblem {
  readonly key: string;
  readonly value: string;
  readonly reason: string;
  readonly by: 'webhook' | 'meshcap';
}

/**
 * The first problem with one annotation's value: the webhook's verdict first, then meshcap's (includeOutboundPorts:
 * MCL009). Without CNI, interceptionMode NONE never reaches meshcap: the injector adds no istio-init for it.
 */
export function checkAnnotationValue(key: string, value: string, cni = true, readByMeshcap = true, mode: 'sidecar' | 'ambient' = 'sidecar'): ValueProblem | undefined {
  const w = WEBHOOK_GRAMMARS.get(key)?.(value);
  if (w !== undefined) return { key, value, reason: w, by: 'webhook' };
  if (!readByMeshcap || key === Annotation.includeOutboundPorts || (!cni && key === Annotation.interceptionMode && value === 'NONE')) return undefined;
  const m = checkMeshcapValue(key, value, mode);
  return m === undefined ? undefined : { key, value, reason: m, by: 'meshcap' };
}

/** includeOutboundPorts: no webhook check; meshcap's grammar decides (MCL009). */
export function checkOutboundPorts(value: string): string | undefined {
  return checkMeshcapValue(Annotation.includeOutboundPorts, value);
}

/** What meshcap-cni refuses among a pod's annotations (the ones its door reads in that mode), webhook aside. */
export function findMeshcapRefusals(annotations: Readonly<Record<string, string>>, mode: 'sidecar' | 'ambient' = 'sidecar'): ValueProblem[] {
  return annotationsRead(mode, annotations).flatMap((g) => {
    const value = annotations[g.name] ?? '';
    const m = checkMeshcapValue(g.name, value, mode);
    return m === undefined ? [] : [{ key: g.name, value, reason: m, by: 'meshcap' as const }];
  });
}

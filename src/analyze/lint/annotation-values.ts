import { parse as parseYaml } from 'yaml';
import { parseCidr, type Parsed } from '../../model/cidr.js';
import { parseCidrsOrAll, parseInterfaceList, parsePortList, parsePortsOrAll } from '../../config/values.js';
import { Annotation } from '../../config/annotations.js';
import { parseExcludeCidrs } from '../../config/schema.js';
import { asRecord } from './data.js';

/**
 * Annotation values checked twice: by the injection webhook's grammar (Istio's pkg/kube/inject/validate.go,
 * operator-tools.md §2.1), which decides whether the pod is admitted at all, and by meshcap's own validators —
 * the same functions the CLI's flags and the CNI plugin's annotations go through — which decide whether
 * meshcap accepts the value when the pod starts. One grammar, three doors.
 */

type Check = (v: string) => string | undefined;

const reason = <T>(r: Parsed<T>): string | undefined => (r.ok ? undefined : r.reason);

/** Go's strconv.ParseUint(s, 10, bits): decimal digits only (leading zeros allowed), in range. */
function goUint(s: string, bits: 16 | 32): string | undefined {
  if (!/^[0-9]+$/.test(s)) return `${JSON.stringify(s)} is not an unsigned integer`;
  return Number(s) > 2 ** bits - 1 ? `${s} is out of range (0-${2 ** bits - 1})` : undefined;
}

/** The webhook's port list: the whole value and each item trimmed, every item a uint16 (0 accepted). */
function webhookPorts(v: string): string | undefined {
  const t = v.trim();
  if (t === '') return undefined;
  for (const item of t.split(',')) {
    const bad = goUint(item.trim(), 16);
    if (bad) return `failed parsing port: ${bad}`;
  }
  return undefined;
}

/** The webhook's CIDR list: split on "," with no trimming; every item (an empty one too) must parse. */
function webhookCidrs(v: string): string | undefined {
  if (v === '') return undefined;
  for (const item of v.split(',')) {
    const r = parseCidr(item);
    if (!r.ok) return `failed parsing cidr ${JSON.stringify(item)}: ${r.reason}`;
  }
  return undefined;
}

const IFACE = /^[a-zA-Z][a-zA-Z0-9_.-]*$/;

/** The webhook's interface list (Istio 1.30+): each item trimmed, non-empty, at most 15 characters. */
function webhookInterfaces(v: string): string | undefined {
  for (const raw of v.split(',')) {
    const item = raw.trim();
    if (item === '') return 'empty interface name';
    if (item.length > 15) return `interface name ${JSON.stringify(item)} is longer than 15 characters`;
    if (!IFACE.test(item)) return `interface name ${JSON.stringify(item)} must start with a letter and hold only letters, digits, "_", "." and "-"`;
  }
  return undefined;
}

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

interface Grammar {
  readonly webhook: Check;
  readonly meshcap?: Check;
}

const READINESS = (v: string) => goUint(v, 32);

/** The annotations the webhook validates, with meshcap's validator where meshcap reads the value too. */
export const GRAMMARS: ReadonlyMap<string, Grammar> = new Map<string, Grammar>([
  [Annotation.includeOutboundIPRanges, { webhook: (v) => (v === '*' ? undefined : webhookCidrs(v)), meshcap: (v) => reason(parseCidrsOrAll(v)) }],
  [Annotation.excludeOutboundIPRanges, { webhook: webhookCidrs, meshcap: (v) => reason(parseExcludeCidrs(v)) }],
  [Annotation.includeInboundPorts, { webhook: (v) => (v === '*' ? undefined : webhookPorts(v)), meshcap: (v) => reason(parsePortsOrAll(v)) }],
  [Annotation.excludeInboundPorts, { webhook: webhookPorts, meshcap: (v) => reason(parsePortList(v)) }],
  [Annotation.excludeOutboundPorts, { webhook: webhookPorts, meshcap: (v) => reason(parsePortList(v)) }],
  [Annotation.excludeInterfaces, { webhook: webhookInterfaces, meshcap: (v) => reason(parseInterfaceList(v)) }],
  [Annotation.kubevirtInterfaces, { webhook: webhookInterfaces, meshcap: (v) => reason(parseInterfaceList(v)) }],
  [Annotation.rerouteVirtualInterfaces, { webhook: webhookInterfaces, meshcap: (v) => reason(parseInterfaceList(v)) }],
  [Annotation.interceptionMode, { webhook: (v) => (PROXY_MODES.includes(v) ? undefined : `must be one of ${PROXY_MODES.join(', ')}`) }],
  [Annotation.statusPort, { webhook: (v) => goUint(v.trim(), 16) }],
  [Annotation.readinessInitialDelay, { webhook: READINESS }],
  [Annotation.readinessPeriod, { webhook: READINESS }],
  [Annotation.readinessFailureThreshold, { webhook: READINESS }],
  [Annotation.proxyConfig, { webhook: checkProxyConfig }],
]);

export interface ValueProblem {
  readonly key: string;
  readonly value: string;
  readonly reason: string;
  readonly by: 'webhook' | 'meshcap';
}

/** The first problem with one annotation's value: the webhook's verdict first, then meshcap's. */
export function checkAnnotationValue(key: string, value: string): ValueProblem | undefined {
  const g = GRAMMARS.get(key);
  if (g === undefined) return undefined;
  const w = g.webhook(value);
  if (w !== undefined) return { key, value, reason: w, by: 'webhook' };
  const m = g.meshcap?.(value);
  return m === undefined ? undefined : { key, value, reason: m, by: 'meshcap' };
}

/** includeOutboundPorts: no webhook check; meshcap's port list decides (MCL009). */
export function checkOutboundPorts(value: string): string | undefined {
  return reason(parsePortList(value));
}

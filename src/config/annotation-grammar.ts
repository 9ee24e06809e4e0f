import { parseCidr, type Parsed } from '../model/cidr.js';
import { Annotation } from './annotations.js';
import { parseGoBool, parseInterface, parseListPort, trimBlanks } from './values.js';

/**
 * How meshcap reads each pod annotation that sets capture options: one table for the CNI door (cni/options.ts),
 * `meshcap lint` (src/analyze/lint) and the node agent. It follows istio-cni at istio master 86c9f01
 * (cni/pkg/plugin/sidecar_redirect.go, pkg/util/net ValidateInterfaceNames, cni/pkg/nodeagent/net.go); the
 * departures are marked `departure:` here and listed in docs/differences-from-istio.md. Each read takes the
 * value exactly as the pod carries it and gives the option text the engine's schema (the CLI's) takes, or the
 * reason the value is refused. Pure.
 */

const ok = (value: string): Parsed<string> => ({ ok: true, value });
const fail = (reason: string): Parsed<string> => ({ ok: false, reason });

/**
 * How an item is trimmed. Istio's checks trim all white space (Go's strings.TrimSpace), then pass the untrimmed
 * value on to iptables-restore, whose tokenizer drops only spaces and tabs: a newline breaks the rule line and
 * fails the ADD there. So meshcap's door trims spaces and tabs (`strict`); lint's view of the webhook trims all.
 */
const trimFor = (strict: boolean) => (strict ? trimBlanks : (s: string) => s.trim());

/**
 * Istio's interface-name rule (ValidateInterfaceNames, Istio 1.30+; the webhook and istio-cni share it): "" is
 * no interfaces; otherwise every ","-separated item, trimmed, is non-empty, at most 15 characters, starts with a
 * letter and holds only letters, digits, "_", "." and "-". Gives the trimmed names.
 */
export function parseIstioInterfaceNames(v: string, strict = false): Parsed<string[]> {
  if (v === '') return { ok: true, value: [] };
  const trim = trimFor(strict);
  const out: string[] = [];
  for (const raw of v.split(',')) {
    const name = trim(raw);
    if (name === '') return { ok: false, reason: 'empty interface name' };
    if (name.length > 15) return { ok: false, reason: `interface name ${JSON.stringify(name)} is longer than 15 characters` };
    if (!/^[a-zA-Z][a-zA-Z0-9_.-]*$/.test(name)) {
      return { ok: false, reason: `interface name ${JSON.stringify(name)} must start with a letter and hold only letters, digits, "_", "." and "-"` };
    }
    out.push(name);
  }
  return { ok: true, value: out };
}

/**
 * Istio's port list (parsePorts, the webhook's and istio-cni's): the value trimmed; "" is no ports; otherwise
 * every ","-separated item, trimmed, is a decimal 0-65535 (an empty item is refused). `strict` adds meshcap's
 * departure: no leading zeros (iptables reads "010" as octal 8, so Istio would match another port).
 */
export function parseIstioPorts(v: string, strict: boolean): Parsed<string[]> {
  const trim = trimFor(strict);
  const t = trim(v);
  if (t === '') return { ok: true, value: [] };
  const out: string[] = [];
  for (const raw of t.split(',')) {
    const item = trim(raw);
    if (!/^[0-9]+$/.test(item)) return { ok: false, reason: `${JSON.stringify(item)} is not a port (a decimal 0-65535)` };
    if (strict) {
      const p = parseListPort(item);
      if (!p.ok) return { ok: false, reason: `${JSON.stringify(item)}: ${p.reason}` };
    } else if (Number(item) > 65535) return { ok: false, reason: `${item} is out of range (0-65535)` };
    out.push(String(Number(item)));
  }
  return { ok: true, value: out };
}

/**
 * Istio's CIDR list (validateCIDRList): "" is none; otherwise split on "," with no trimming, and every item, an
 * empty one too, must be an address/prefix (Go's netip.ParsePrefix; meshcap's parseCidr is the same grammar).
 */
export function parseIstioCidrs(v: string): Parsed<string> {
  if (v === '') return ok('');
  for (const item of v.split(',')) {
    const r = parseCidr(item);
    if (!r.ok) return fail(`${JSON.stringify(item)}: ${r.reason}`);
  }
  return ok(v);
}

type Read = (value: string) => Parsed<string>;

const joined = (r: Parsed<string[]>): Parsed<string> => (r.ok ? ok(r.value.join(',')) : r);

/**
 * A port list as istio-cni takes it. `blank` is a value of only spaces: istio-cni trims it to "" for
 * excludeInboundPorts, but passes it untrimmed to istio-iptables for the other lists, where iptables-restore
 * then fails the ADD — refusing it gives the same outcome with a clearer message.
 */
function ports(opts: { wildcard: boolean; blank: 'empty' | 'refuse' }): Read {
  return (v) => {
    if (v === '*') {
      // departure (same outcome): istio-cni accepts "*" for the exclude lists, then iptables fails on "--dport *".
      return opts.wildcard ? ok('*') : fail('"*" is not a port list here (only includeInboundPorts takes "*")');
    }
    if (v !== '' && trimBlanks(v) === '' && opts.blank === 'refuse') return fail('a value of only spaces is not a port list');
    return joined(parseIstioPorts(v, true));
  };
}

const cidrs = (wildcard: boolean): Read => (v) => (wildcard && v === '*' ? ok('*') : parseIstioCidrs(v));

const istioInterfaces: Read = (v) => joined(parseIstioInterfaceNames(v, true));

/**
 * The ambient node agent's list (getPodLevelTrafficOverrides): split on ",", each item trimmed, empty items
 * dropped, no check of the names. departure: meshcap checks each name with its flag rule (parseInterface),
 * because the names reach the rules it writes.
 */
const ambientInterfaces: Read = (v) => {
  const names = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const name of names) {
    const r = parseInterface(name);
    if (!r.ok) return fail(`${JSON.stringify(name)}: ${r.reason}`);
  }
  return ok(names.join(','));
};

const goBool: Read = (v) => {
  const r = parseGoBool(v);
  return r.ok ? ok(String(r.value)) : fail(r.reason);
};

const MODES = ['REDIRECT', 'TPROXY'];

export interface AnnotationGrammar {
  readonly name: string;
  /** The engine option (a key of SIDECAR_INPUTS or AMBIENT_INPUTS) the value sets. */
  readonly option: string;
  /** How the value is split, trimmed, validated and defaulted, for docs/cni.md. */
  readonly grammar: string;
  /** The value when the pod does not carry the annotation (the plugin config's field may change it). */
  readonly default: string;
  /** A bad value fails ADD (`refuse`), or is ignored with a warning as Istio does (`ignore`). */
  readonly onBad: 'refuse' | 'ignore';
  /** Setting it can take traffic out of capture (the bypass policy judges these; docs/cni.md). */
  readonly narrows: boolean;
  readonly read: Read;
}

const G = (g: AnnotationGrammar) => g;

/** Sidecar mode: what istio-cni's NewRedirect reads, in its order. */
export const SIDECAR_ANNOTATIONS: readonly AnnotationGrammar[] = [
  G({ name: Annotation.interceptionMode, option: 'interceptionMode', default: 'REDIRECT', onBad: 'refuse', narrows: false,
    grammar: 'exactly REDIRECT or TPROXY (no trimming; "" and NONE are refused, as istio-cni refuses them)',
    read: (v) => (MODES.includes(v) ? ok(v) : fail('must be "REDIRECT" or "TPROXY"')) }),
  G({ name: Annotation.includeOutboundIPRanges, option: 'outboundInclude', default: '*', onBad: 'refuse', narrows: true,
    grammar: '"*" (all), "" (none), or CIDRs split on "," with no trimming; an empty item is refused', read: cidrs(true) }),
  G({ name: Annotation.excludeOutboundIPRanges, option: 'outboundExclude', default: '', onBad: 'refuse', narrows: true,
    grammar: '"" (none) or CIDRs split on "," with no trimming; an empty item and "*" are refused', read: cidrs(false) }),
  G({ name: Annotation.excludeInboundPorts, option: 'inboundExcludePorts', default: '15020', onBad: 'refuse', narrows: true,
    grammar: 'ports 0-65535 split on ",", the value and each item trimmed; "" or spaces = none; 15020,15021,15090 always added',
    read: ports({ wildcard: false, blank: 'empty' }) }),
  G({ name: Annotation.includeInboundPorts, option: 'inboundPorts', default: '*', onBad: 'refuse', narrows: true,
    grammar: '"*" (all), "" (no inbound capture), or ports 0-65535 split on ",", each item trimmed',
    read: ports({ wildcard: true, blank: 'refuse' }) }),
  G({ name: Annotation.excludeOutboundPorts, option: 'outboundExcludePorts', default: '15020', onBad: 'refuse', narrows: true,
    grammar: 'ports 0-65535 split on ",", each item trimmed; replaces the default 15020 ("" = no exclusions)',
    read: ports({ wildcard: false, blank: 'refuse' }) }),
  G({ name: Annotation.includeOutboundPorts, option: 'outboundPorts', default: '', onBad: 'refuse', narrows: false,
    grammar: 'ports 0-65535 split on ",", each item trimmed ("" = none)', read: ports({ wildcard: false, blank: 'refuse' }) }),
  G({ name: Annotation.excludeInterfaces, option: 'excludeInterfaces', default: '', onBad: 'refuse', narrows: true,
    grammar: 'Istio interface names split on ",", each trimmed; an empty item is refused ("" = none)', read: istioInterfaces }),
  G({ name: Annotation.rerouteVirtualInterfaces, option: 'kubeVirtInterfaces', default: '', onBad: 'refuse', narrows: false,
    grammar: `as excludeInterfaces; when present (even ""), ${Annotation.kubevirtInterfaces} is not read`, read: istioInterfaces }),
  G({ name: Annotation.kubevirtInterfaces, option: 'kubeVirtInterfaces', default: '', onBad: 'refuse', narrows: false,
    grammar: `as excludeInterfaces; read only when ${Annotation.rerouteVirtualInterfaces} is absent (deprecated)`, read: istioInterfaces }),
];

/** Ambient mode: what the node agent reads (cni/pkg/nodeagent/net.go). */
export const AMBIENT_ANNOTATIONS: readonly AnnotationGrammar[] = [
  G({ name: Annotation.bypassInboundCapture, option: 'ingressMode', default: 'false', onBad: 'ignore', narrows: true,
    grammar: "a Go boolean (true/false, 1/0, t/f); any other value is ignored with a warning", read: goBool }),
  G({ name: Annotation.dnsCapture, option: 'podDnsCapture', default: '', onBad: 'ignore', narrows: true,
    grammar: 'a Go boolean; any other value is ignored with a warning (the node\'s redirect_dns decides)', read: goBool }),
  G({ name: Annotation.rerouteVirtualInterfaces, option: 'virtualInterfaces', default: '', onBad: 'refuse', narrows: false,
    grammar: 'interface names split on ",", each trimmed, empty items dropped; each name passes meshcap\'s flag rule (at most 15 bytes; letters, digits, _ - . @, a trailing +)', read: ambientInterfaces }),
];

export const grammarsFor = (mode: 'sidecar' | 'ambient') => (mode === 'sidecar' ? SIDECAR_ANNOTATIONS : AMBIENT_ANNOTATIONS);

export function findGrammar(mode: 'sidecar' | 'ambient', name: string): AnnotationGrammar | undefined {
  return grammarsFor(mode).find((g) => g.name === name);
}

/** The one-line refusal every door prints: the annotation, the value exactly as the pod carries it, the reason. */
export function formatAnnotationRefusal(name: string, value: string, reason: string): string {
  return `invalid annotation ${name}=${JSON.stringify(value)}: ${reason}`;
}

export interface AnnotationRefusal {
  readonly name: string;
  readonly value: string;
  readonly reason: string;
}

/** What a pod's annotations set: option → text (and which annotation set it), warnings, or the first refusal. */
export interface AnnotationReading {
  readonly options: ReadonlyMap<string, { readonly text: string; readonly annotation: string }>;
  readonly warnings: readonly string[];
  readonly refusal: AnnotationRefusal | undefined;
}

/**
 * The table's annotations a pod carries that the door reads, in the table's order: the first annotation of an
 * option wins (reroute-virtual-interfaces over kubevirtInterfaces, which istio-cni then does not even validate).
 */
export function annotationsRead(mode: 'sidecar' | 'ambient', annotations: Readonly<Record<string, string>>): readonly AnnotationGrammar[] {
  const seen = new Set<string>();
  return grammarsFor(mode).filter((g) => {
    if (annotations[g.name] === undefined || seen.has(g.option)) return false;
    seen.add(g.option);
    return true;
  });
}

/** Reads every annotation the door reads, in the table's order; the first refused value stops. */
export function readPodAnnotations(mode: 'sidecar' | 'ambient', annotations: Readonly<Record<string, string>>): AnnotationReading {
  const options = new Map<string, { text: string; annotation: string }>();
  const warnings: string[] = [];
  for (const g of annotationsRead(mode, annotations)) {
    const value = annotations[g.name] ?? '';
    const r = g.read(value);
    if (r.ok) options.set(g.option, { text: r.value, annotation: g.name });
    else if (g.onBad === 'ignore') warnings.push(`ignored ${g.name}=${JSON.stringify(value)}: ${r.reason} (as Istio does)`);
    else return { options, warnings, refusal: { name: g.name, value, reason: r.reason } };
  }
  return { options, warnings, refusal: undefined };
}

import { Annotation } from '../../../src/config/annotations.js';

/**
 * How istio-cni reads pod annotations, as cases: the annotations a pod carries and what istio-cni does with
 * them — the istio-iptables options it derives (its Program() sets them on istio-iptables' config; written here
 * as the istio-iptables flags of the same options), or a refusal. Facts from istio/istio at master 86c9f01fd73
 * (PROVENANCE.md beside this file names the tests and functions each group comes from); meshcap's own code is
 * not consulted. `departure` marks a case where meshcap answers differently on purpose: its id is the slug
 * of a heading in docs/differences-from-istio.md.
 */

export type IstioOutcome =
  /** ADD succeeds with these istio-iptables options (overrides of ISTIO_CNI_DEFAULTS). */
  | { readonly flags: Readonly<Record<string, string>> }
  /** ADD fails: at validation (`validation`), or later when iptables-restore rejects the rules (`apply`). */
  | { readonly refused: 'validation' | 'apply' };

export interface AnnotationCase {
  readonly name: string;
  /** Sidecar (istio-cni's plugin) unless `ambient` (Istio's node agent); ambient flags are `meshcap ambient`'s. */
  readonly mode?: 'ambient';
  /** The istio/istio test or function the case comes from (PROVENANCE.md). */
  readonly source: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly istio: IstioOutcome;
  /** meshcap refuses where Istio accepts; the id names the section of docs/differences-from-istio.md. */
  readonly departure?: string;
}

/** The options istio-cni's Program() passes for a pod with no capture annotations (plugin defaults, UID 1337). */
export const ISTIO_CNI_DEFAULTS: Readonly<Record<string, string>> = {
  '-p': '15001', '-z': '15006', '-u': '1337', '-g': '1337', '-m': 'REDIRECT', '-i': '*', '-x': '', '-b': '*',
  '-d': '15020,15021,15090', '-o': '15020', '-q': '', '-c': '', '-k': '',
};

/**
 * Ambient: what Istio's node agent derives (getPodLevelTrafficOverrides: IngressMode, DNSProxy, VirtualInterfaces),
 * written as the `meshcap ambient` options of the same settings; meshcap-cni's ambient defaults otherwise.
 */
export const AMBIENT_DEFAULTS: Readonly<Record<string, string>> = { '--inbound': 'tproxy' };

/** The full argv of `meshcap -n` (sidecar: istio-iptables' flags) for a case's mode and an outcome's flags. */
export function istioArgv(flags: Readonly<Record<string, string>>, mode?: 'ambient'): string[] {
  if (mode === 'ambient') return ['ambient', ...Object.entries({ ...AMBIENT_DEFAULTS, ...flags }).flatMap(([f, v]) => [f, v])];
  return Object.entries({ ...ISTIO_CNI_DEFAULTS, ...flags }).flatMap(([f, v]) => [f, v]);
}

const A = Annotation;
const accept = (flags: Record<string, string>): IstioOutcome => ({ flags });
const atValidation: IstioOutcome = { refused: 'validation' };
const atApply: IstioOutcome = { refused: 'apply' };
const C = (name: string, source: string, annotations: Record<string, string>, istio: IstioOutcome, departure?: string): AnnotationCase =>
  departure === undefined ? { name, source, annotations, istio } : { name, source, annotations, istio, departure };
const AMB = (name: string, source: string, annotations: Record<string, string>, istio: IstioOutcome, departure?: string): AnnotationCase => ({
  ...C(`ambient: ${name}`, source, annotations, istio, departure),
  mode: 'ambient',
});

const IFACE_TEST = 'pkg/util/net/ip_test.go TestValidateInterfaceNames';
/** ValidateInterfaceNames' own cases (#58785), each as excludeInterfaces; accepted ones reach -c untrimmed. */
const INTERFACE_CASES: readonly [string, string, boolean][] = [
  ['empty string', '', true],
  ['single valid interface', 'eth0', true],
  ['multiple valid interfaces', 'eth0,eth1,lo', true],
  ['interface with underscore', 'eth_0', true],
  ['interface with hyphen', 'eth-0', true],
  ['interface with dot', 'eth0.1', true],
  ['interface starting with number', '0eth', false],
  ['interface starting with underscore', '_eth0', false],
  ['complex valid names', 'veth123abc,br-docker0,bond0.100', true],
  ['max length interface', 'a23456789012345', true],
  ['too long interface name', '1234567890123456', false],
  ['interface with space', 'eth0 -d 10.0.0.50', false],
  ['iptables injection attempt', 'eth0 -d 10.0.0.50 -p tcp --dport 8080', false],
  ['interface with semicolon', 'eth0;echo', false],
  ['interface with pipe', 'eth0|cat', false],
  ['interface with backtick', 'eth0`id`', false],
  ['interface with dollar sign', 'eth0$PATH', false],
  ['empty interface in list', 'eth0,,eth1', false],
  ['interface with leading space (trimmed)', ' eth0', true],
  ['interface with trailing space (trimmed)', 'eth0 ', true],
  ['spaces around comma (trimmed)', 'eth0 , eth1', true],
  ['interface with slash', 'eth0/1', false],
  ['interface with colon', 'eth0:1', false],
  ['interface with at sign', 'veth@if123', false],
];

const REDIRECT = 'cni/pkg/plugin/sidecar_redirect.go';
const OVERRIDES = 'cni/pkg/nodeagent/net_test.go TestGetPodLevelOverrides';
const AGENT = 'cni/pkg/nodeagent/net.go getPodLevelTrafficOverrides';
const DRYRUN = 'cni/pkg/plugin/plugin_dryrun_test.go';
const PLUGIN = 'cni/pkg/plugin/plugin_test.go';

export const ANNOTATION_CASES: readonly AnnotationCase[] = [
  ...INTERFACE_CASES.map(([name, v, ok]) => C(`excludeInterfaces: ${name}`, IFACE_TEST, { [A.excludeInterfaces]: v }, ok ? accept({ '-c': v }) : atValidation)),
  C('excludeInterfaces: a natural list "eth1, eth2"', IFACE_TEST, { [A.excludeInterfaces]: 'eth1, eth2' }, accept({ '-c': 'eth1, eth2' })),
  C('excludeInterfaces: only spaces is an empty name', IFACE_TEST, { [A.excludeInterfaces]: ' ' }, atValidation),
  C('excludeInterfaces: a trailing comma is an empty name', IFACE_TEST, { [A.excludeInterfaces]: 'eth1,' }, atValidation),
  C('excludeInterfaces: a newline after a name passes the check, then breaks the restore line', IFACE_TEST, { [A.excludeInterfaces]: 'eth1\n' }, atApply),
  C('excludeInterfaces: a tab before a name is trimmed', IFACE_TEST, { [A.excludeInterfaces]: '\teth1' }, accept({ '-c': '\teth1' })),
  C('excludeInterfaces: the "+" wildcard is not a name', IFACE_TEST, { [A.excludeInterfaces]: 'veth+' }, atValidation),
  C('reroute-virtual-interfaces: trimmed list', `${REDIRECT} NewRedirect`, { [A.rerouteVirtualInterfaces]: 'net1, net2' }, accept({ '-k': 'net1, net2' })),
  C('reroute-virtual-interfaces: a name starting with a digit', `${REDIRECT} NewRedirect`, { [A.rerouteVirtualInterfaces]: '1net' }, atValidation),
  C('kubevirtInterfaces: read when reroute-virtual-interfaces is absent', `${REDIRECT} NewRedirect`, { [A.kubevirtInterfaces]: 'net1' }, accept({ '-k': 'net1' })),
  C('kubevirtInterfaces: an empty entry is refused', `${REDIRECT} NewRedirect`, { [A.kubevirtInterfaces]: 'net1,,net2' }, atValidation),
  C('reroute-virtual-interfaces wins; kubevirtInterfaces is not even validated', `${REDIRECT} NewRedirect`,
    { [A.rerouteVirtualInterfaces]: 'net1', [A.kubevirtInterfaces]: '0bad' }, accept({ '-k': 'net1' })),
  C('an empty reroute-virtual-interfaces still wins over kubevirtInterfaces', `${REDIRECT} NewRedirect`,
    { [A.rerouteVirtualInterfaces]: '', [A.kubevirtInterfaces]: 'net1' }, accept({ '-k': '' })),

  C('interceptionMode TPROXY', `${DRYRUN} tproxy`, { [A.interceptionMode]: 'TPROXY' }, accept({ '-m': 'TPROXY' })),
  C('interceptionMode REDIRECT', `${REDIRECT} validateInterceptionMode`, { [A.interceptionMode]: 'REDIRECT' }, accept({})),
  C('interceptionMode "" is refused', `${REDIRECT} validateInterceptionMode`, { [A.interceptionMode]: '' }, atValidation),
  C('interceptionMode NONE is refused', `${REDIRECT} validateInterceptionMode`, { [A.interceptionMode]: 'NONE' }, atValidation),
  C('interceptionMode in lower case is refused', `${REDIRECT} validateInterceptionMode`, { [A.interceptionMode]: 'tproxy' }, atValidation),
  C('interceptionMode is not trimmed', `${REDIRECT} validateInterceptionMode`, { [A.interceptionMode]: ' TPROXY' }, atValidation),

  C('include and exclude IP ranges', `${DRYRUN} include-exclude-ip`,
    { [A.includeOutboundIPRanges]: '127.0.0.0/8', [A.excludeOutboundIPRanges]: '10.0.0.0/8' }, accept({ '-i': '127.0.0.0/8', '-x': '10.0.0.0/8' })),
  C('includeOutboundIPRanges "" captures no outbound', `${REDIRECT} validateCIDRListWithWildcard`, { [A.includeOutboundIPRanges]: '' }, accept({ '-i': '' })),
  C('includeOutboundIPRanges: IPv4 and IPv6', `${REDIRECT} validateCIDRList`,
    { [A.includeOutboundIPRanges]: '198.51.100.0/24,2001:db8::/32' }, accept({ '-i': '198.51.100.0/24,2001:db8::/32' })),
  C('includeOutboundIPRanges: a space after the comma is refused', `${REDIRECT} validateCIDRList`, { [A.includeOutboundIPRanges]: '10.0.0.0/8, 192.0.2.0/24' }, atValidation),
  C('includeOutboundIPRanges: a trailing comma is refused', `${REDIRECT} validateCIDRList`, { [A.includeOutboundIPRanges]: '10.0.0.0/8,' }, atValidation),
  C('includeOutboundIPRanges: a bare address is refused', `${REDIRECT} validateCIDRList`, { [A.includeOutboundIPRanges]: '192.0.2.1' }, atValidation),
  C('includeOutboundIPRanges: "*" only alone', `${REDIRECT} validateCIDRListWithWildcard`, { [A.includeOutboundIPRanges]: '*,10.0.0.0/8' }, atValidation),
  C('excludeOutboundIPRanges "*" is refused', `${REDIRECT} validateCIDRList`, { [A.excludeOutboundIPRanges]: '*' }, atValidation),
  C('excludeOutboundIPRanges: a leading space is refused', `${REDIRECT} validateCIDRList`, { [A.excludeOutboundIPRanges]: ' 10.0.0.0/8' }, atValidation),
  C('excludeOutboundIPRanges: an empty item is refused', `${REDIRECT} validateCIDRList`, { [A.excludeOutboundIPRanges]: '10.0.0.0/8,,192.0.2.0/24' }, atValidation),

  C('include and exclude ports', `${DRYRUN} include-exclude-ports`,
    { [A.includeInboundPorts]: '1111,2222', [A.excludeInboundPorts]: '3333,4444', [A.excludeOutboundPorts]: '5555,6666' },
    accept({ '-b': '1111,2222', '-d': '3333,4444,15020,15021,15090', '-o': '5555,6666' })),
  C('includeInboundPorts "*"', `${PLUGIN} TestCmdAddTwoContainersWithStarInboundPort`, { [A.includeInboundPorts]: '*' }, accept({})),
  C('includeInboundPorts "" turns inbound capture off', `${PLUGIN} TestCmdAddTwoContainersWithEmptyInboundPort`, { [A.includeInboundPorts]: '' }, accept({ '-b': '' })),
  C('excludeInboundPorts "" keeps only the ports always added', `${PLUGIN} TestCmdAddTwoContainersWithEmptyExcludeInboundPort`, { [A.excludeInboundPorts]: '' }, accept({})),
  C('excludeInboundPorts 3306', `${PLUGIN} TestCmdAddTwoContainersWithExplictExcludeInboundPort`, { [A.excludeInboundPorts]: '3306' }, accept({ '-d': '3306,15020,15021,15090' })),
  C('excludeInboundPorts: duplicates of the added ports are removed', `${PLUGIN} Test_dedupPorts`, { [A.excludeInboundPorts]: '15021,3306,3306' }, accept({ '-d': '15021,3306,15020,15090' })),
  C('excludeInboundPorts: the value is trimmed', `${REDIRECT} NewRedirect`, { [A.excludeInboundPorts]: ' 3306 ' }, accept({ '-d': '3306,15020,15021,15090' })),
  C('excludeInboundPorts: only spaces is no ports', `${REDIRECT} NewRedirect`, { [A.excludeInboundPorts]: '   ' }, accept({})),
  C('excludeInboundPorts: a bad value is refused (named as the pod carries it)', `${PLUGIN} Test_dedupPorts`, { [A.excludeInboundPorts]: 'abcd,2345' }, atValidation),
  C('excludeInboundPorts: "*" passes validation, then iptables refuses --dport *', `${REDIRECT} validatePortListWithWildcard`, { [A.excludeInboundPorts]: '*' }, atApply),
  C('excludeOutboundPorts "" replaces the default 15020', `${REDIRECT} defaultRedirectExcludePort`, { [A.excludeOutboundPorts]: '' }, accept({ '-o': '' })),
  C('excludeOutboundPorts: spaces around items', `${REDIRECT} parsePorts`, { [A.excludeOutboundPorts]: '3306, 5432' }, accept({ '-o': '3306, 5432' })),
  C('excludeOutboundPorts: only spaces passes validation, then iptables refuses an empty --dport', `${REDIRECT} parsePorts`, { [A.excludeOutboundPorts]: '  ' }, atApply),
  C('excludeOutboundPorts: an empty item is refused', `${REDIRECT} parsePorts`, { [A.excludeOutboundPorts]: '3306,,5432' }, atValidation),
  C('excludeOutboundPorts: 65536 is refused', `${REDIRECT} parsePort`, { [A.excludeOutboundPorts]: '65536' }, atValidation),
  C('excludeOutboundPorts: a sign is refused', `${REDIRECT} parsePort`, { [A.excludeOutboundPorts]: '+80' }, atValidation),
  C('excludeOutboundPorts: port 0 is accepted', `${REDIRECT} parsePort`, { [A.excludeOutboundPorts]: '0' }, accept({ '-o': '0' })),
  C('includeOutboundPorts 8080', `${REDIRECT} NewRedirect`, { [A.includeOutboundPorts]: '8080' }, accept({ '-q': '8080' })),
  C('includeOutboundPorts: a space inside a port is refused', `${REDIRECT} parsePort`, { [A.includeOutboundPorts]: '80 80' }, atValidation),
  C('includeInboundPorts: spaces around items', `${REDIRECT} parsePorts`, { [A.includeInboundPorts]: ' 8080 , 9090 ' }, accept({ '-b': ' 8080 , 9090 ' })),
  C('includeInboundPorts: a smuggled target is refused', `${REDIRECT} parsePort`, { [A.includeInboundPorts]: '80 -j DROP' }, atValidation),
  C('includeInboundPorts: a leading zero is a decimal to Istio (iptables then reads it as octal)', `${REDIRECT} parsePort`,
    { [A.includeInboundPorts]: '010' }, accept({ '-b': '010' }), 'leading-zeros-in-ports'),
  C('excludeOutboundPorts: 0080 passes validation, then iptables refuses it', `${REDIRECT} parsePort`, { [A.excludeOutboundPorts]: '0080' }, atApply),

  AMB('dns-capture "true"', OVERRIDES, { [A.dnsCapture]: 'true' }, accept({ '--pod-dns-capture': 'true' })),
  AMB('dns-capture "false"', OVERRIDES, { [A.dnsCapture]: 'false' }, accept({ '--pod-dns-capture': 'false' })),
  AMB('all three overrides, the list trimmed', OVERRIDES,
    { [A.dnsCapture]: 'true', [A.bypassInboundCapture]: 'true', [A.rerouteVirtualInterfaces]: 'en0ps1, en1ps1' },
    accept({ '--pod-dns-capture': 'true', '--ingress-mode': 'true', '--virtual-interfaces': 'en0ps1,en1ps1' })),
  AMB('booleans that do not parse are ignored; a name too long for iptables then fails the rules', OVERRIDES,
    { [A.dnsCapture]: 'tweedledum', [A.bypassInboundCapture]: 'tweedledee', [A.rerouteVirtualInterfaces]: 'asd^&&*$&*(#$&*(#&$*())),   ' }, atApply),
  AMB('booleans that do not parse are ignored', OVERRIDES, { [A.dnsCapture]: 'tweedledum', [A.bypassInboundCapture]: 'tweedledee' }, accept({})),
  AMB('bypass-inbound-capture takes Go booleans ("1")', `${AGENT} (CheckBooleanAnnotation: strconv.ParseBool)`, { [A.bypassInboundCapture]: '1' }, accept({ '--ingress-mode': 'true' })),
  AMB('bypass-inbound-capture "false"', `${AGENT} (CheckBooleanAnnotation: strconv.ParseBool)`, { [A.bypassInboundCapture]: 'false' }, accept({})),
  AMB('reroute-virtual-interfaces: empty entries are dropped', AGENT, { [A.rerouteVirtualInterfaces]: ' net1, ,net2,' }, accept({ '--virtual-interfaces': 'net1,net2' })),
  AMB('reroute-virtual-interfaces "" is none', AGENT, { [A.rerouteVirtualInterfaces]: '' }, accept({})),
  AMB('reroute-virtual-interfaces: names are not checked (a digit first works in iptables)', AGENT, { [A.rerouteVirtualInterfaces]: '1net,veth@if2' }, accept({ '--virtual-interfaces': '1net,veth@if2' })),
  AMB('reroute-virtual-interfaces: a space inside a name breaks the rule', AGENT, { [A.rerouteVirtualInterfaces]: 'net 1' }, atApply),
  AMB('reroute-virtual-interfaces: a name iptables takes but meshcap refuses', AGENT, { [A.rerouteVirtualInterfaces]: 'a^b' }, accept({ '--virtual-interfaces': 'a^b' }), 'ambient-interface-names'),
];

/** What meshcap's door must do for a case: the Istio outcome, or a refusal where meshcap departs. */
export function expectedOfMeshcap(c: AnnotationCase): 'accept' | 'refuse' {
  if (c.departure !== undefined) return 'refuse';
  return 'flags' in c.istio ? 'accept' : 'refuse';
}

/** What one run of the door gave: accepted with the kernel's rules equal (or not) to Istio's, or refused with a message. */
export type DoorOutcome = { readonly accepted: true; readonly sameRules: boolean } | { readonly accepted: false; readonly message: string };

/** The mismatches between a case and what the door did; [] when they agree. */
export function judgeCase(c: AnnotationCase, outcome: DoorOutcome): string[] {
  const want = expectedOfMeshcap(c);
  if (want === 'accept') {
    if (!outcome.accepted) return [`expected the rules istio-cni derives, but ADD failed: ${outcome.message}`];
    return outcome.sameRules ? [] : ['ADD succeeded but the rules differ from what istio-cni derives'];
  }
  if (outcome.accepted) return ['expected a refusal, but ADD succeeded'];
  const named = Object.entries(c.annotations).some(([k, v]) => outcome.message.includes(`annotation ${k}=${JSON.stringify(v)}`));
  return named ? [] : [`the refusal does not name an annotation and its value as the pod carries it: ${outcome.message}`];
}

import { PlanError } from '../errors.js';
import { isPerFamily, type AddressValue, type Clause, type Family, type Proto, type Rule, type Target } from '../model/rule.js';
import type { Cidr } from '../model/cidr.js';
import { formatAddress, formatCanonicalCidr } from './inet.js';

/**
 * A rule's match-and-target tokens in two spellings: Istio's (what istio-iptables writes into its restore
 * input; order and spelling as emitted) and the kernel's (what iptables-save prints back).
 */

const not = (negated: boolean | undefined) => (negated ? ['!'] : []);
const hex = (n: number) => `0x${n.toString(16)}`;

/** A mark and mask as iptables-save prints them: `0x539/0xffffffff`. */
export const formatSavedMark = (mark: number, mask: number) => `${hex(mark)}/${hex(mask)}`;

function addressFor(addr: AddressValue, family: Family): Cidr {
  return isPerFamily(addr) ? addr[family] : addr;
}

function protoOf(c: Clause, proto: Proto | undefined): Proto {
  if (proto === undefined) throw new PlanError(`a ${c.k} clause needs a protocol`);
  return proto;
}

function protoOfRule(rule: Rule): Proto | undefined {
  return rule.match.find((c): c is Extract<Clause, { k: 'proto' }> => c.k === 'proto')?.proto;
}

function istioClause(c: Clause, family: Family, proto: Proto | undefined): string[] {
  switch (c.k) {
    case 'src':
    case 'dst':
      return [...not(c.not), c.k === 'src' ? '-s' : '-d', addressFor(c.addr, family).text];
    case 'in':
    case 'out':
      return [...not(c.not), c.k === 'in' ? '-i' : '-o', c.iface];
    case 'proto':
      return ['-p', c.proto];
    case 'port':
      return [...(c.explicit ? ['-m', protoOf(c, proto)] : []), ...not(c.not), `--${c.dir}`, String(c.port)];
    case 'protomatch':
      return ['-m', c.proto];
    case 'socket-exists':
      return ['-m', 'owner', '--socket-exists'];
    case 'set':
      return ['-m', 'set', '--match-set', typeof c.name === 'string' ? c.name : c.name[family], c.dir];
    case 'multiport':
      return ['-m', 'multiport', ...not(c.not), '--dports', c.ports.join(',')];
    case 'owner':
      return ['-m', 'owner', ...not(c.not), `--${c.kind}-owner`, c.id.text];
    case 'mark':
    case 'connmark':
      return ['-m', c.k, ...not(c.not), '--mark', c.mask === undefined ? String(c.mark) : `${hex(c.mark)}/${hex(c.mask)}`];
    case 'conntrack':
      return ['-m', 'conntrack', '--ctstate', c.states.join(',')];
  }
}

function istioTarget(t: Target, family: Family): string[] {
  switch (t.k) {
    case 'jump':
      return ['-j', t.chain];
    case 'redirect':
      return ['-j', 'REDIRECT', `--${t.spelling}`, String(t.port)];
    case 'set-mark':
      return ['-j', 'MARK', '--set-mark', t.mask === undefined ? String(t.mark) : `${hex(t.mark)}/${hex(t.mask)}`];
    case 'connmark':
      return ['-j', 'CONNMARK', t.op === 'save' ? '--save-mark' : '--restore-mark', ...(t.explicitMasks ? FULL_MASKS : [])];
    case 'connmark-set':
      return ['-j', 'CONNMARK', '--set-xmark', `${hex(t.mark)}/${hex(t.mask)}`];
    case 'tproxy':
      return t.spelling === 'ambient'
        ? ['-j', 'TPROXY', '--on-port', String(t.port), '--tproxy-mark', `${hex(t.mark)}/${hex(t.mask)}`]
        : ['-j', 'TPROXY', '--tproxy-mark', `${t.mark}/${hex(t.mask)}`, '--on-port', String(t.port)];
    case 'ct-zone':
      return ['-j', 'CT', '--zone', String(t.zone)];
    case 'snat':
      return ['-j', 'SNAT', '--to-source', addressFor(t.to, family).text];
  }
}

const FULL_MASKS = ['--nfmask', '0xffffffff', '--ctmask', '0xffffffff'];

/** Match and target tokens as Istio writes them. */
export function formatIstioSpec(rule: Rule, family: Family): string[] {
  const proto = protoOfRule(rule);
  return [...rule.match.flatMap((c) => istioClause(c, family, proto)), ...istioTarget(rule.target, family)];
}

const CT_STATE_ORDER = ['INVALID', 'NEW', 'RELATED', 'ESTABLISHED', 'UNTRACKED', 'SNAT', 'DNAT'];
const LEADING: readonly Clause['k'][] = ['src', 'dst', 'in', 'out', 'proto'];

function saveClause(c: Clause, family: Family, proto: Proto | undefined, purpose: string): string[] {
  switch (c.k) {
    case 'src':
    case 'dst': {
      const a = addressFor(c.addr, family);
      // The kernel keeps no address match for a /0 prefix, so iptables-save prints none.
      if (a.prefix === 0 && !c.not) return [];
      return [...not(c.not), c.k === 'src' ? '-s' : '-d', formatCanonicalCidr(a)];
    }
    case 'port':
      return ['-m', protoOf(c, proto), ...not(c.not), `--${c.dir}`, String(c.port)];
    case 'owner':
      if (c.id.id === undefined) throw new PlanError(`rule ${purpose}: group ${c.id.text} has no numeric id`);
      return ['-m', 'owner', ...not(c.not), `--${c.kind}-owner`, String(c.id.id)];
    case 'mark':
    case 'connmark':
      return ['-m', c.k, ...not(c.not), '--mark', c.mask === undefined || c.mask === 0xffffffff ? hex(c.mark) : `${hex(c.mark)}/${hex(c.mask)}`];
    case 'conntrack':
      return ['-m', 'conntrack', '--ctstate', [...c.states].sort((a, b) => CT_STATE_ORDER.indexOf(a) - CT_STATE_ORDER.indexOf(b)).join(',')];
    default:
      return istioClause(c, family, proto);
  }
}

function saveTarget(t: Target, family: Family): string[] {
  switch (t.k) {
    case 'redirect':
      return ['-j', 'REDIRECT', '--to-ports', String(t.port)];
    case 'set-mark':
      return ['-j', 'MARK', '--set-xmark', `${hex(t.mark)}/${hex(t.mask ?? 0xffffffff)}`];
    case 'connmark':
      return ['-j', 'CONNMARK', t.op === 'save' ? '--save-mark' : '--restore-mark', ...FULL_MASKS];
    case 'tproxy':
      return ['-j', 'TPROXY', '--on-port', String(t.port), '--on-ip', family === 'ipv4' ? '0.0.0.0' : '::', '--tproxy-mark', formatSavedMark(t.mark, t.mask)];
    case 'snat':
      return ['-j', 'SNAT', '--to-source', formatAddress(addressFor(t.to, family).bytes)];
    default:
      return istioTarget(t, family);
  }
}

/** Match and target tokens as iptables-save prints them: addresses, interfaces and protocol first. */
export function formatSaveSpec(rule: Rule, family: Family): string[] {
  const proto = protoOfRule(rule);
  const leading = LEADING.flatMap((k) => rule.match.filter((c) => c.k === k));
  const rest = rule.match.filter((c) => !LEADING.includes(c.k));
  return [...leading, ...rest].flatMap((c) => saveClause(c, family, proto, rule.purpose)).concat(saveTarget(rule.target, family));
}

import type { Cidr } from '../model/cidr.js';
import { isPerFamily, type AddressValue, type Clause, type Family, type Rule, type Table, type Target } from '../model/rule.js';
import { formatCanonicalCidr } from '../render/inet.js';
import { isModelClause } from './rule-spec.js';
import type { InspectedClause, ParsedRule, InspectedTarget } from './types.js';

/** A rule reduced to what the kernel keeps of it: the form both the model and the parser compare in. */
export interface KernelRule {
  readonly table: Table;
  readonly chain: string;
  readonly match: readonly InspectedClause[];
  readonly target: InspectedTarget;
}

const FULL = 0xffffffff;
const LEADING = ['src', 'dst', 'in', 'out', 'proto', 'proto-other'];
const CT_ORDER = ['INVALID', 'NEW', 'RELATED', 'ESTABLISHED', 'UNTRACKED', 'SNAT', 'DNAT'];
const negated = (not: boolean | undefined) => (not ? { not: true } : {});

function address(a: AddressValue, family: Family): Cidr {
  const c = isPerFamily(a) ? a[family] : a;
  return { family: c.family, text: formatCanonicalCidr(c), bytes: c.bytes, prefix: c.prefix };
}

function canonicalClause(c: InspectedClause, family: Family): InspectedClause | undefined {
  switch (c.k) {
    case 'src':
    case 'dst': {
      const addr = address(c.addr, family);
      return addr.prefix === 0 && !c.not ? undefined : { k: c.k, ...negated(c.not), addr };
    }
    case 'in':
    case 'out':
      return { k: c.k, ...negated(c.not), iface: c.iface };
    case 'port':
      return { k: 'port', dir: c.dir, ...negated(c.not), port: c.port };
    case 'set':
      return { k: 'set', name: typeof c.name === 'string' ? c.name : c.name[family], dir: c.dir };
    case 'multiport':
      return { k: 'multiport', ...negated(c.not), ports: c.ports };
    case 'owner':
      return { k: 'owner', kind: c.kind, ...negated(c.not), id: { text: String(c.id.id ?? c.id.text), id: c.id.id } };
    case 'mark':
    case 'connmark':
      return { k: c.k, ...negated(c.not), mark: c.mark, ...(c.mask === undefined || c.mask === FULL ? {} : { mask: c.mask }) };
    case 'conntrack':
      return { k: 'conntrack', states: [...c.states].sort((a, b) => CT_ORDER.indexOf(a) - CT_ORDER.indexOf(b)) };
    default:
      return c;
  }
}

function canonicalTarget(t: InspectedTarget, family: Family): InspectedTarget {
  switch (t.k) {
    case 'redirect':
      return { k: 'redirect', port: t.port, spelling: 'to-ports' };
    case 'set-mark':
      return { k: 'set-mark', mark: t.mark, ...(t.mask === undefined || t.mask === FULL ? {} : { mask: t.mask }) };
    case 'connmark':
      return { k: 'connmark', op: t.op };
    case 'tproxy':
      return { k: 'tproxy', mark: t.mark, mask: t.mask, port: t.port };
    case 'snat':
      return { k: 'snat', to: address(t.to, family) };
    default:
      return t;
  }
}

/** The kernel's form of a model or parsed rule in one family: per-family values resolved, spellings merged, save order. */
export function toKernelRule(rule: Pick<Rule, 'table' | 'chain'> & { readonly match: readonly InspectedClause[]; readonly target: InspectedTarget }, family: Family): KernelRule {
  const match = rule.match.map((c) => canonicalClause(c, family)).filter((c): c is InspectedClause => c !== undefined);
  const ordered = [...LEADING.flatMap((k) => match.filter((c) => c.k === k)), ...match.filter((c) => !LEADING.includes(c.k))];
  return { table: rule.table, chain: rule.chain, match: ordered, target: canonicalTarget(rule.target, family) };
}

const MODEL_TARGETS = new Set(['jump', 'redirect', 'set-mark', 'connmark', 'connmark-set', 'tproxy', 'snat', 'ct-zone']);

/** A parsed rule as a model rule (family-specific, appended), when every clause and the target are the model's. */
export function asModelRule(r: ParsedRule, purpose = ''): Rule | undefined {
  if (!r.match.every(isModelClause) || !MODEL_TARGETS.has(r.target.k)) return undefined;
  return { family: r.family, table: r.table, chain: r.chain, op: { k: 'append' }, match: r.match as Clause[], target: r.target as Target, purpose };
}

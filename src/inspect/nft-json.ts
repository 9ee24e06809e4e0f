import { splitWords, type NftDoc, type NftTableDoc } from './nft-text.js';

/**
 * `nft -j list ruleset` → the same document nft-text.ts reads from `nft list ruleset`: each rule's expressions
 * are printed the way nft 1.0.6 lists them, then read by the one reader of nft rule words. An expression this
 * printer does not know is printed as its JSON, which no reader knows either: the rule stays foreign.
 */

type Json = unknown;
const isObj = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const hex8 = (n: number) => `0x${(n >>> 0).toString(16).padStart(8, '0')}`;
const foreign = (v: Json) => JSON.stringify(v).replace(/\s+/g, '');

/** A left-hand side: `meta mark`, `ip daddr`, `ct state`, `meta mark & 0x00000fff`. */
function printLeft(v: Json): { text: string; marks: boolean; quoted: boolean } {
  if (isObj(v) && isObj(v['meta'])) {
    const key = String(v['meta']['key']);
    const bare = key === 'iifname' || key === 'oifname';
    return { text: bare ? key : `meta ${key}`, marks: key === 'mark', quoted: bare };
  }
  if (isObj(v) && isObj(v['payload'])) return { text: `${String(v['payload']['protocol'])} ${String(v['payload']['field'])}`, marks: false, quoted: false };
  if (isObj(v) && isObj(v['ct'])) return { text: `ct ${String(v['ct']['key'])}`, marks: v['ct']['key'] === 'mark', quoted: false };
  // Printed for the rule's name only: no reader knows `fib`, so the rule stays foreign.
  if (isObj(v) && isObj(v['fib']) && Array.isArray(v['fib']['flags'])) return { text: `fib ${v['fib']['flags'].map(String).join(' . ')} ${String(v['fib']['result'])}`, marks: false, quoted: false };
  const and = isObj(v) ? v['&'] : undefined;
  if (Array.isArray(and) && and.length === 2 && typeof and[1] === 'number') {
    const inner = printLeft(and[0]);
    return { ...inner, text: `${inner.text} & ${hex8(and[1])}` };
  }
  return { text: foreign(v), marks: false, quoted: false };
}

/** A right-hand side as nft prints it for that left side. */
function printRight(v: Json, left: { marks: boolean; quoted: boolean }): string {
  if (typeof v === 'number') return left.marks ? hex8(v) : String(v);
  if (typeof v === 'string') return left.quoted ? `"${v}"` : v;
  if (Array.isArray(v)) return v.map((x) => printRight(x, left)).join(',');
  if (isObj(v) && isObj(v['prefix'])) return `${String(v['prefix']['addr'])}/${String(v['prefix']['len'])}`;
  if (isObj(v) && Array.isArray(v['range'])) return v['range'].map((x) => printRight(x, left)).join('-');
  if (isObj(v) && Array.isArray(v['set'])) return `{ ${v['set'].map((x) => printRight(x, left)).join(', ')} }`;
  return foreign(v);
}

/** `ct mark`, `meta mark`, a number, or `ct mark & A | B` as the value of a `set`. */
function printValue(v: Json): string {
  if (typeof v === 'number') return hex8(v);
  const or = isObj(v) ? v['|'] : undefined;
  if (Array.isArray(or) && or.length === 2 && typeof or[1] === 'number') return `${printLeft(or[0]).text} | ${hex8(or[1])}`;
  return printLeft(v).text;
}

function printNat(kind: string, v: Record<string, Json>): string {
  const fam = typeof v['family'] === 'string' ? `${v['family']} ` : '';
  const addr = typeof v['addr'] === 'string' ? v['addr'] : undefined;
  const port = typeof v['port'] === 'number' ? `:${v['port']}` : '';
  if (addr === undefined) return kind === 'redirect' && port !== '' ? `redirect to ${port}` : foreign({ [kind]: v });
  return `${kind} ${fam}to ${addr.includes(':') && port !== '' ? `[${addr}]` : addr}${port}`;
}

/** One expression or statement of a rule, printed as nft lists it. */
export function printExpression(e: Json): string {
  if (!isObj(e)) return foreign(e);
  const [key] = Object.keys(e);
  const v = key === undefined ? undefined : e[key];
  if (key === 'match' && isObj(v)) {
    const left = printLeft(v['left']);
    // nft writes `==` only after a bitwise `&`.
    const masked = left.text.includes(' & ');
    const op = v['op'] === '!=' ? ' !=' : v['op'] === '==' ? (masked ? ' ==' : '') : v['op'] === 'in' ? '' : ` ${String(v['op'])}`;
    return `${left.text}${op} ${printRight(v['right'], left)}`;
  }
  if (key === 'counter') return 'counter';
  if ((key === 'accept' || key === 'drop' || key === 'return' || key === 'continue' || key === 'masquerade' || key === 'notrack') && v === null) return key;
  if ((key === 'jump' || key === 'goto') && isObj(v)) return `${key} ${String(v['target'])}`;
  if (key === 'redirect' && isObj(v)) return typeof v['port'] === 'number' ? `redirect to :${v['port']}` : foreign(e);
  if (key === 'tproxy' && isObj(v) && typeof v['port'] === 'number' && v['addr'] === undefined) return `tproxy ${typeof v['family'] === 'string' ? `${v['family']} ` : ''}to :${v['port']}`;
  if (key === 'mangle' && isObj(v)) return `${printLeft(v['key']).text} set ${typeof v['value'] === 'number' && isObj(v['key']) && isObj(v['key']['ct']) && v['key']['ct']['key'] === 'zone' ? String(v['value']) : printValue(v['value'])}`;
  if ((key === 'snat' || key === 'dnat') && isObj(v)) return printNat(key, v);
  return foreign(e);
}

function setElements(elem: Json): string[] {
  if (!Array.isArray(elem)) return [];
  return elem.map((x) => (isObj(x) && isObj(x['elem']) ? printRight(x['elem']['val'], { marks: false, quoted: false }) : printRight(x, { marks: false, quoted: false })));
}

/** Parses `nft -j list ruleset`; a document it cannot read is one problem, not an exception. */
export function parseNftJson(json: string): NftDoc {
  let items: Json;
  try {
    items = (JSON.parse(json) as { nftables?: Json } | null)?.nftables;
  } catch (err) {
    return { tables: [], problems: [`nft -j output is not JSON: ${(err as Error).message}`] };
  }
  if (!Array.isArray(items)) return { tables: [], problems: ['nft -j output has no "nftables" array'] };
  const tables = new Map<string, NftTableDoc>();
  const tableOf = (o: Record<string, Json>) => tables.get(`${String(o['family'])} ${String(o['table'])}`);
  for (const item of items) {
    if (!isObj(item)) continue;
    const [t, c, s, r] = [item['table'], item['chain'], item['set'], item['rule']];
    if (isObj(t)) tables.set(`${String(t['family'])} ${String(t['name'])}`, { family: String(t['family']), name: String(t['name']), chains: [], rules: [], sets: new Map() });
    if (isObj(c)) {
      const base = typeof c['hook'] === 'string' && typeof c['prio'] === 'number' ? { base: { type: String(c['type']), hook: c['hook'], priority: c['prio'] }, policy: c['policy'] === 'drop' ? ('DROP' as const) : ('ACCEPT' as const) } : {};
      tableOf(c)?.chains.push({ name: String(c['name']), ...base });
    }
    if (isObj(s)) tableOf(s)?.sets.set(String(s['name']), setElements(s['elem']));
    if (isObj(r) && Array.isArray(r['expr'])) {
      const printed = r['expr'].map(printExpression).join(' ');
      tableOf(r)?.rules.push({ chain: String(r['chain']), words: splitWords(printed), printed });
    }
  }
  return { tables: [...tables.values()], problems: [] };
}

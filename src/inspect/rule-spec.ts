import { parseCidr, parseHostAddress, type Cidr } from '../model/cidr.js';
import type { Clause } from '../model/rule.js';
import { formatCanonicalCidr } from '../render/inet.js';
import type { InspectedClause, InspectedTarget } from './types.js';
import { parseMatchModule, type OptionItem } from './match-modules.js';
import { parseTarget } from './targets.js';

/** Splits a rule line into tokens, keeping "quoted strings" (comments) whole. */
export function tokenize(line: string): string[] {
  return [...line.matchAll(/"(?:[^"\\]|\\.)*"|\S+/g)].map((m) => m[0]);
}

const BASE = new Set(['-s', '--source', '-d', '--destination', '-i', '--in-interface', '-o', '--out-interface', '-p', '--protocol', '-f', '--fragment']);
const MODULE = new Set(['-m', '--match']);
const TARGET = new Set(['-j', '--jump', '-g', '--goto']);
const isBoundary = (t: string | undefined) => t !== undefined && (BASE.has(t) || MODULE.has(t) || TARGET.has(t));

/** An address as iptables-save prints it (`a/len`, or a bare host address); undefined when it cannot be read. */
export function parseSavedAddress(text: string): Cidr | undefined {
  const p = text.includes('/') ? parseCidr(text) : parseHostAddress(text);
  return p.ok ? { ...p.value, text: formatCanonicalCidr(p.value) } : undefined;
}

function baseClause(flag: string, value: string, not: boolean): InspectedClause {
  switch (flag) {
    case '-s':
    case '--source':
    case '-d':
    case '--destination': {
      const addr = parseSavedAddress(value);
      if (addr === undefined) return { k: 'foreign', module: flag, tokens: [...(not ? ['!'] : []), flag, value] };
      const k = flag.startsWith('-s') || flag === '--source' ? 'src' : 'dst';
      return not ? { k, not, addr } : { k, addr };
    }
    case '-i':
    case '--in-interface':
    case '-o':
    case '--out-interface': {
      const k = flag === '-i' || flag === '--in-interface' ? 'in' : 'out';
      return not ? { k, not, iface: value } : { k, iface: value };
    }
    default: {
      const proto = value.toLowerCase();
      if (!not && (proto === 'tcp' || proto === 'udp')) return { k: 'proto', proto };
      return { k: 'proto-other', not, proto };
    }
  }
}

/** Groups a module's option tokens into items: `[!] --opt value…`. */
function optionItems(tokens: readonly string[]): OptionItem[] {
  const items: OptionItem[] = [];
  let not = false;
  for (const t of tokens) {
    if (t === '!') not = true;
    else if (t.startsWith('--')) {
      items.push({ not, opt: t, values: [] });
      not = false;
    } else {
      const last = items[items.length - 1];
      if (last === undefined) items.push({ not, opt: '', values: [t] });
      else last.values.push(t);
    }
  }
  return items;
}

export interface ParsedSpec {
  readonly match: InspectedClause[];
  readonly target: InspectedTarget;
}

/**
 * Reads a rule's match and target tokens (what follows `-A CHAIN` in iptables-save) into clauses and a target
 * of the model's shape; what the model has no shape for becomes an extra (foreign) clause or target, never an
 * error. `chains` (the table's chains) tells a jump from an unknown target. Base matches (`-s -d -i -o -p`) and modules (`-m name --opt …`) are read in printed order.
 */
export function parseRuleSpec(tokens: readonly string[], chains?: ReadonlySet<string>): ParsedSpec {
  const match: InspectedClause[] = [];
  let proto: string | undefined;
  let i = 0;
  while (i < tokens.length) {
    let t = tokens[i] ?? '';
    let not = false;
    if (t === '!' && isBoundary(tokens[i + 1])) {
      not = true;
      t = tokens[++i] ?? '';
    }
    if (BASE.has(t)) {
      if (t === '-f' || t === '--fragment') {
        match.push({ k: 'foreign', module: '-f', tokens: [...(not ? ['!'] : []), t] });
        i += 1;
        continue;
      }
      const value = tokens[i + 1] ?? '';
      const c = baseClause(t, value, not);
      if (c.k === 'proto' || c.k === 'proto-other') proto = c.k === 'proto' ? c.proto : c.proto;
      match.push(c);
      i += 2;
    } else if (MODULE.has(t)) {
      const name = tokens[i + 1] ?? '';
      let j = i + 2;
      while (j < tokens.length && !isBoundary(tokens[j]) && !(tokens[j] === '!' && isBoundary(tokens[j + 1]))) j++;
      const opts = tokens.slice(i + 2, j);
      match.push(...parseMatchModule(name, optionItems(opts), proto, [t, name, ...opts]));
      i = j;
    } else if (TARGET.has(t)) {
      const name = tokens[i + 1] ?? '';
      const rest = tokens.slice(i + 2);
      const goto = t === '-g' || t === '--goto';
      return { match, target: goto ? { k: 'goto', chain: name } : parseTarget(name, optionItems(rest), rest, chains) };
    } else {
      match.push({ k: 'foreign', module: t, tokens: [t] });
      i += 1;
    }
  }
  return { match, target: { k: 'none' } };
}

/** Narrows a clause to the model's own union. */
export function isModelClause(c: InspectedClause): c is Clause {
  return ['src', 'dst', 'in', 'out', 'proto', 'port', 'protomatch', 'socket-exists', 'set', 'multiport', 'owner', 'mark', 'connmark', 'conntrack'].includes(c.k);
}

import type { BaseHook } from './types.js';

/**
 * The structure of `nft list ruleset` / `nft -s list ruleset` text as nft 1.0.6 prints it: tables, their
 * chains (base chains with hook, priority and policy), sets with their elements, and each rule's words.
 * What a rule's words mean is nft-rule.ts's business. Objects trace never needs (maps, flowtables, counters,
 * quotas) are skipped whole.
 */

export interface NftRuleLine {
  readonly chain: string;
  /** The rule's words: quoted strings kept whole, `{`, `}` and `,` as words of their own. */
  readonly words: readonly string[];
  /** The rule as nft prints it, counters without their values (`counter`), handles left out. */
  readonly printed: string;
}

export interface NftChainDoc {
  readonly name: string;
  readonly base?: BaseHook;
  readonly policy?: 'ACCEPT' | 'DROP';
}

export interface NftTableDoc {
  readonly family: string;
  readonly name: string;
  readonly chains: NftChainDoc[];
  readonly rules: NftRuleLine[];
  /** Sets by name: their elements as printed (`192.0.2.1`, `198.51.100.0/24`). */
  readonly sets: Map<string, string[]>;
}

export interface NftDoc {
  readonly tables: readonly NftTableDoc[];
  readonly problems: readonly string[];
}

const PRIORITY_NAMES: Record<string, number> = { raw: -300, mangle: -150, dstnat: -100, filter: 0, security: 50, srcnat: 100 };

/** `dstnat`, `-100`, `mangle + 5`, `filter - 10`. */
export function parsePriority(text: string): number | undefined {
  const m = /^([a-z]+|-?[0-9]+)(?:\s*([+-])\s*([0-9]+))?$/.exec(text.trim());
  if (m === null) return undefined;
  const base = /^-?[0-9]+$/.test(m[1] ?? '') ? Number(m[1]) : PRIORITY_NAMES[m[1] ?? ''];
  if (base === undefined) return undefined;
  return base + (m[2] === undefined ? 0 : (m[2] === '+' ? 1 : -1) * Number(m[3]));
}

/** A line's words: `"quoted strings"`, braces and commas on their own, everything else split on blanks. */
export function splitWords(line: string): string[] {
  return line.match(/"[^"]*"|[{},]|[^\s{},]+/g) ?? [];
}

function printedRule(line: string): string {
  return line.replace(/\s*# handle [0-9]+$/, '').replace(/counter packets [0-9]+ bytes [0-9]+/g, 'counter').trim();
}

function parseBaseLine(line: string): { base: BaseHook; policy: 'ACCEPT' | 'DROP' } | undefined {
  const m = /^type\s+(\S+)\s+hook\s+(\S+)(?:\s+device\s+\S+)?\s+priority\s+([^;]+);(?:\s*policy\s+(accept|drop);)?/.exec(line);
  const priority = parsePriority(m?.[3] ?? '');
  if (m === null || priority === undefined) return undefined;
  return { base: { type: m[1] ?? '', hook: m[2] ?? '', priority }, policy: m[4] === 'drop' ? 'DROP' : 'ACCEPT' };
}

type Where = { k: 'top' } | { k: 'table'; t: NftTableDoc } | { k: 'chain'; t: NftTableDoc; c: NftChainDoc } | { k: 'set'; t: NftTableDoc; name: string; elements: boolean } | { k: 'skip'; t: NftTableDoc; depth: number };

function enterTable(line: string, where: Where, tables: NftTableDoc[]): Where | undefined {
  const tm = /^table\s+(\S+)\s+(\S+)\s*\{$/.exec(line);
  if (where.k !== 'top' || tm === null) return undefined;
  const t: NftTableDoc = { family: tm[1] ?? '', name: tm[2] ?? '', chains: [], rules: [], sets: new Map() };
  tables.push(t);
  return { k: 'table', t };
}

function inTable(line: string, t: NftTableDoc): Where | undefined {
  const cm = /^chain\s+(\S+)\s*\{$/.exec(line);
  if (cm !== null) {
    const c: NftChainDoc = { name: cm[1] ?? '' };
    t.chains.push(c);
    return { k: 'chain', t, c };
  }
  const sm = /^set\s+(\S+)\s*\{$/.exec(line);
  if (sm !== null) {
    t.sets.set(sm[1] ?? '', []);
    return { k: 'set', t, name: sm[1] ?? '', elements: false };
  }
  return /^\S+\s.*\{$/.test(line) ? { k: 'skip', t, depth: 1 } : undefined;
}

function inSet(line: string, where: Extract<Where, { k: 'set' }>): Where {
  const elements = where.elements || /^elements\s*=/.test(line);
  if (elements) {
    const words = splitWords(line.replace(/^elements\s*=\s*/, '').replace(/\s+comment\s+"[^"]*"/g, ''));
    where.t.sets.get(where.name)?.push(...words.filter((w) => !['{', '}', ','].includes(w)));
  }
  return { ...where, elements: elements && !line.endsWith('}') };
}

/** Parses `nft list ruleset` text. Never throws: lines it cannot place are listed in `problems`. */
export function parseNftText(text: string): NftDoc {
  const tables: NftTableDoc[] = [];
  const problems: string[] = [];
  let where: Where = { k: 'top' };
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || (line.startsWith('#') && where.k !== 'set')) return;
    if (where.k === 'set' && (where.elements || line !== '}')) where = inSet(line, where);
    else if (where.k === 'skip') where = line.endsWith('{') ? { ...where, depth: where.depth + 1 } : line === '}' ? (where.depth === 1 ? { k: 'table', t: where.t } : { ...where, depth: where.depth - 1 }) : where;
    else if (line === '}') where = where.k === 'table' || where.k === 'top' ? { k: 'top' } : { k: 'table', t: where.t };
    else if (where.k === 'top') where = enterTable(line, where, tables) ?? (problems.push(`line ${index + 1}: ${JSON.stringify(line.slice(0, 60))} is outside a table`), where);
    else if (where.k === 'table') where = inTable(line, where.t) ?? where;
    else if (where.k === 'chain') {
      const head = line.startsWith('type ') ? parseBaseLine(line) : undefined;
      if (head !== undefined) Object.assign(where.c, head);
      else if (line.startsWith('type ')) problems.push(`line ${index + 1}: cannot read the hook line ${JSON.stringify(line)}`);
      else where.t.rules.push({ chain: where.c.name, words: splitWords(printedRule(line)), printed: printedRule(line) });
    }
  });
  if (where.k !== 'top') problems.push('the text ends inside a table');
  return { tables, problems };
}

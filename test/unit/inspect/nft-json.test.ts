import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNftJson } from '../../../src/inspect/nft-json.js';
import { buildNftRules } from '../../../src/inspect/nft-ruleset.js';
import { parseNftText } from '../../../src/inspect/nft-text.js';

/** `nft -j list ruleset` and `nft list ruleset` of the same namespace (nft 1.0.6), recorded together. */
const FIXTURES = join(import.meta.dirname, '../../fixtures/nft-json');
const read = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

describe('nft -j list ruleset, printed as nft lists it and read by the one rule reader', () => {
  it.each(['sidecar-tproxy', 'ambient', 'foreign'])('%s: every rule prints exactly as nft listed it, and reads into the same tables and sets', (name) => {
    const fromJson = parseNftJson(read(`${name}.json`));
    const fromText = parseNftText(read(`${name}.list`));
    expect(fromJson.problems).toEqual([]);
    expect(fromJson.tables.flatMap((t) => t.rules.map((r) => `${t.name} ${r.chain}: ${r.printed}`))).toEqual(fromText.tables.flatMap((t) => t.rules.map((r) => `${t.name} ${r.chain}: ${r.printed}`)));
    expect(fromJson.tables.map((t) => t.chains)).toEqual(fromText.tables.map((t) => t.chains));
    expect(buildNftRules(fromJson)).toEqual(buildNftRules(fromText));
  });

  it('keeps what it cannot print foreign, so the rule is unknown', () => {
    const rules = buildNftRules(parseNftJson(read('foreign.json'))).tables.flatMap((t) => t.rules);
    expect(rules.length).toBeGreaterThan(0);
    for (const r of rules) expect(r.match.some((c) => c.k === 'foreign')).toBe(true);
  });

  it('says when the output is not nft JSON', () => {
    expect(parseNftJson('nope').problems[0]).toMatch(/not JSON/);
    expect(parseNftJson('{"x":1}').problems).toEqual(['nft -j output has no "nftables" array']);
  });
});

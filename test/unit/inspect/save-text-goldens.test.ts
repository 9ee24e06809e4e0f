import { describe, expect, it } from 'vitest';
import { appliedRules } from '../../../src/model/ownership.js';
import { rulesFor } from '../../../src/model/chains.js';
import type { Family, Rule } from '../../../src/model/rule.js';
import { renderSaveDryRun, simulateChains } from '../../../src/render/save.js';
import { formatSaveSpec } from '../../../src/render/spec.js';
import { asModelRule, toKernelRule } from '../../../src/inspect/canonical.js';
import { parseSaveText } from '../../../src/inspect/save-text.js';
import { AMBIENT_CASES, AMBIENT_TPROXY_CASES } from '../../conformance/ambient-cases.js';
import { CAPTURE_CASES, CNI_CASES } from '../../conformance/sidecar-cases.js';
import { planFor } from '../../helpers/plan.js';

const CASES = [...CAPTURE_CASES, ...CNI_CASES, ...AMBIENT_CASES, ...AMBIENT_TPROXY_CASES].filter((c) => c.appliable !== false);

/** The plan's rules of one family in the order the kernel holds them, chain by chain as the save prints them. */
function kernelOrder(rules: readonly Rule[], family: Family) {
  return ['filter', 'mangle', 'nat', 'raw'].flatMap((table) => {
    const chains = simulateChains(rulesFor(rules, family).filter((r) => r.table === table));
    return [...chains.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([, list]) => list.map((r) => toKernelRule(r, family)));
  });
}

describe('the save-text parser on every golden config', () => {
  it.each(CASES.map((c) => [c.golden, c.argv, c.env ?? {}] as const))('reads %s back into exactly the model rules that produced it', (_golden, argv, env) => {
    const plan = planFor(argv, env);
    const parsed = parseSaveText(renderSaveDryRun(plan));
    expect(parsed.problems).toEqual([]);
    for (const family of plan.families) {
      const got = parsed.tables.filter((t) => t.family === family).flatMap((t) => t.rules);
      const sort = (list: { table: string; chain: string }[]) => [...list].sort((a, b) => (a.table + a.chain < b.table + b.chain ? -1 : a.table + a.chain > b.table + b.chain ? 1 : 0));
      const want = kernelOrder(appliedRules(plan), family);
      expect(sort(got.map((r) => toKernelRule(r, family)))).toEqual(sort(want));
      for (const r of got) {
        const model = asModelRule(r);
        expect(model, `${r.chain} ${r.spec} is a model rule`).toBeDefined();
        if (model) expect(formatSaveSpec(model, family).join(' ')).toBe(r.spec);
      }
    }
  });
});

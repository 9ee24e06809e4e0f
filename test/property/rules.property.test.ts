import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCommand } from '../../src/commands/load.js';
import { renderRestore } from '../../src/render/restore.js';
import { renderSaveFamily } from '../../src/render/save.js';
import { applyPlan, cleanupPlan } from '../../src/exec/apply.js';
import { createSpawnRunner } from '../../src/exec/spawn-runner.js';
import { createLogger } from '../../src/log.js';
import type { Plan } from '../../src/model/plan.js';
import { fakeHost } from '../helpers/cli.js';
import { createNetns, deleteNetns, requireRoot, saveTables, type Netns } from '../helpers/netns.js';
import { saveOf } from '../helpers/meshcap.js';
import { FOREIGN_V4, FOREIGN_V6 } from '../fixtures/foreign-rules.js';
import { anyConfig, SCALE, SEED, type Generated } from './arbitraries.js';

requireRoot();

const log = createLogger({ level: 'silent', format: 'json' });
const planOf = (g: Generated): Plan => loadCommand(g.command, g.flags, {}, fakeHost()).plan;
const TEST_CONFIGS = Math.round(2000 * SCALE);
const APPLY_CONFIGS = Math.round(40 * SCALE);

/** Figures for the README's reliability section, printed at the end of the run. */
export const figures = { seed: SEED, restoreTested: 0, applied: 0 };

describe(`property: random valid configs (seed ${SEED}; replay with MESHCAP_PROPERTY_SEED=${SEED})`, () => {
  let ns: Netns | undefined;
  beforeAll(async () => {
    console.log(`property seed ${SEED}, ${TEST_CONFIGS} configs for --test, ${APPLY_CONFIGS} applied`);
    ns = await createNetns('mcprop');
  });
  afterAll(async () => {
    await deleteNetns(ns);
    console.log(`property figures: ${JSON.stringify(figures)}`);
  });

  it(`every rendered restore text is accepted by iptables-restore --test / ip6tables-restore --test (${TEST_CONFIGS} configs)`, { timeout: 300_000 }, async () => {
    const configs = fc.sample(anyConfig, { numRuns: TEST_CONFIGS, seed: SEED });
    // The legacy backend checks every config (a --test there costs ~1 ms); nft, whose --test goes through the
    // kernel's transaction machinery (~35 ms a config here), checks one config in ten.
    const judges = [
      { backend: 'legacy', every: 1, batch: 500 },
      { backend: 'nft', every: 10, batch: 50 },
    ] as const;
    for (const family of ['ipv4', 'ipv6'] as const) {
      const texts = configs.map((g) => ({ g, text: renderRestore(planOf(g), family) })).filter((x) => x.text !== '');
      for (const judge of judges) {
        const cmd = `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-${judge.backend}-restore`;
        const picked = texts.filter((_, i) => i % judge.every === 0);
        // Without --noflush each `*table` block starts from an empty table, so many configs test in one process.
        for (let i = 0; i < picked.length; i += judge.batch) {
          const batch = picked.slice(i, i + judge.batch);
          const r = await ns!.tryRun(cmd, ['--test'], { input: batch.map((x) => x.text).join('') });
          if (r.exitCode !== 0) {
            for (const x of batch) {
              const one = await ns!.tryRun(cmd, ['--test'], { input: x.text });
              expect({ config: x.g, stderr: one.stderr }).toEqual({ config: x.g, stderr: '' });
            }
          }
          expect(r.stderr).toBe('');
          figures.restoreTested += batch.length;
        }
      }
    }
  });

  it(`apply equals the dry-run, re-apply changes nothing, cleanup restores the namespace byte for byte (${APPLY_CONFIGS} configs)`, { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(anyConfig, async (g) => {
        const plan = planOf(g);
        const exec = { reconcile: false, forceApply: false, forcedBackend: 'nft' as const };
        const pod = await createNetns('mcpa');
        try {
          await pod.run('ip', ['link', 'set', 'lo', 'up']);
          await pod.run('iptables-nft-restore', ['--noflush'], { input: FOREIGN_V4 });
          await pod.run('ip6tables-nft-restore', ['--noflush'], { input: FOREIGN_V6 });
          const before = { v4: await saveOf(pod, 'ipv4', 'nft'), v6: await saveOf(pod, 'ipv6', 'nft') };
          const rulesBefore = (await pod.run('ip', ['-4', 'rule', 'show'])).stdout + (await pod.run('ip', ['-6', 'rule', 'show'])).stdout;
          const runner = createSpawnRunner(pod.path);
          await applyPlan(runner, plan, exec, log);
          const applied = { v4: await saveOf(pod, 'ipv4', 'nft'), v6: await saveOf(pod, 'ipv6', 'nft') };
          // What the apply added to the kernel's output is exactly the dry-run's chains and rules.
          for (const family of plan.families) {
            const [real, prev] = family === 'ipv4' ? [applied.v4, before.v4] : [applied.v6, before.v6];
            const added = [...real.split('\n')];
            for (const line of prev.split('\n')) added.splice(added.indexOf(line), added.includes(line) ? 1 : 0);
            const expected = renderSaveFamily(plan, family).filter((l) => l.startsWith('-A') || l.startsWith(':ISTIO'));
            expect(added.sort()).toEqual(expected.sort());
          }
          const again = await applyPlan(runner, plan, exec, log);
          expect(again.families.every((f) => f.action === 'unchanged')).toBe(true);
          expect({ v4: await saveOf(pod, 'ipv4', 'nft'), v6: await saveOf(pod, 'ipv6', 'nft') }).toEqual(applied);
          await cleanupPlan(runner, plan, exec, log);
          const after = { v4: await saveOf(pod, 'ipv4', 'nft'), v6: await saveOf(pod, 'ipv6', 'nft') };
          expect(saveTables(after.v4)).toEqual(saveTables(before.v4));
          expect(saveTables(after.v6)).toEqual(saveTables(before.v6));
          expect((await pod.run('ip', ['-4', 'rule', 'show'])).stdout + (await pod.run('ip', ['-6', 'rule', 'show'])).stdout).toBe(rulesBefore);
          figures.applied++;
        } finally {
          await deleteNetns(pod);
        }
      }),
      { seed: SEED, numRuns: APPLY_CONFIGS, endOnFailure: true },
    );
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import type { PodTopology } from '../helpers/topology.js';
import { makeRng, randomAmbient, randomFlows, randomSidecar, type TraceConfig } from './trace-configs.js';
import { kernelWalk } from './trace-witness.js';
import { applyConfig, connectAll } from './trace-harness.js';
import { countVerdicts, runTraceRound } from './trace-round.js';

requireRoot();

/**
 * The kernel is the oracle: seeded random configs are applied for real in a pod namespace, real TCP
 * connections are made (outbound as the app, the proxy, its group, its passthrough source, ztunnel's mark;
 * inbound from the peer), and where each one lands (listener, port, original destination) must be exactly
 * where `meshcap trace` said it would — from the live namespace and from its iptables-save dump.
 */
const SEED = Number(process.env['TRACE_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const FLOWS_PER_CONFIG = 44;
/** Flows per config also traced through the built executable (the rest in-process, over the same runner). */
const PROCESS_FLOWS = 2;

function configsFor(backend: string): TraceConfig[] {
  const rng = makeRng(SEED ^ (backend === 'nft' ? 0 : 0x5eed));
  return [randomSidecar(rng), randomSidecar(rng), randomSidecar(rng), randomSidecar(rng), randomAmbient(rng), randomAmbient(rng)];
}

async function dumpOf(t: PodTopology, backend: string): Promise<string> {
  const v4 = await t.pod.run(`iptables-${backend}-save`, []);
  const v6 = await t.pod.run(`ip6tables-${backend}-save`, []);
  return `${v4.stdout}\n${v6.stdout}\n`;
}

for (const backend of ['nft', 'legacy'] as const) {
  describe(`trace against the kernel (${backend}, seed ${SEED})`, () => {
    let agreed = 0;
    let total = 0;
    let drawn = 0;
    const verdicts = new Map<string, number>();
    const dir = mkdtempSync(join(tmpdir(), 'meshcap-trace-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    configsFor(backend).forEach((cfg, index) => {
      it(`predicts where every connection lands: ${cfg.title}`, async () => {
        const flows = randomFlows(makeRng(SEED + index * 7919 + (backend === 'nft' ? 0 : 104729)), cfg, FLOWS_PER_CONFIG);
        const { rows, live } = await runTraceRound({
          flows,
          apply: (t) => applyConfig(t, cfg, backend),
          dump: { read: (t) => dumpOf(t, backend), file: join(dir, `dump-${index}.save`) },
          processFlows: PROCESS_FLOWS,
          // A second witness for a disagreement: the rules the kernel itself reports it ran (nft only).
          explain: async (t, wrong) => {
            if (backend !== 'nft') return;
            for (const w of wrong.slice(0, 3)) {
              const f = flows[findFlow(flows, w.flow)] as (typeof flows)[number];
              Object.assign(w, { kernelPath: await kernelWalk(t.pod, [f.dport], () => connectAll(t, [f])) });
            }
          },
        });
        countVerdicts(verdicts, live);
        agreed += rows.filter((r) => r.ok).length;
        drawn += rows.filter((r) => r.drawn === true).length;
        total += rows.length;
        expect(rows.filter((r) => !r.ok)).toEqual([]);
      });
    });

    it('covered at least 200 flows and printed the agreement', () => {
      const mix = [...verdicts].sort().map(([v, n]) => `${v}: ${n}`).join(', ');
      console.log(`seed ${SEED} (${backend}): trace agrees with the kernel on ${agreed}/${total} flows (${mix}); ${drawn}/${total} trace pictures show the walk step for step`);
      expect(total).toBeGreaterThanOrEqual(200);
      expect(agreed).toBe(total);
      expect(drawn).toBe(total);
    });
  });
}

function findFlow(flows: readonly { direction: string; sender: { name: string }; dst: string; dport: number }[], flow: string): number {
  return flows.findIndex((f) => `${f.direction} ${f.sender.name} -> ${f.dst}:${f.dport}` === flow);
}

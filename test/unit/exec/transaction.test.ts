import { describe, expect, it } from 'vitest';
import { cleanupEdits, renderEdits } from '../../../src/exec/transaction.js';
import { parseSave } from '../../../src/exec/state.js';
import { renderSaveFamily } from '../../../src/render/save.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

describe('cleanupEdits', () => {
  const plan = planFor([...ISTIO_INIT_ARGS, '--ipv6', 'off']);
  const applied = renderSaveFamily(plan, 'ipv4').join('\n');

  it('removes our chains and the builtin rules that jump into them', () => {
    const text = renderEdits(cleanupEdits(plan, 'ipv4', parseSave(applied)).edits);
    expect(text).toContain('-D OUTPUT -j ISTIO_OUTPUT');
    expect(text).toContain('-X ISTIO_OUTPUT');
  });

  it("keeps a chain that someone else's chain still jumps to, and says so", () => {
    const withForeign = applied.replace(':ISTIO_INBOUND - [0:0]', ':ISTIO_INBOUND - [0:0]\n:USER-CHAIN - [0:0]').replace('COMMIT', '-A USER-CHAIN -j ISTIO_REDIRECT\nCOMMIT');
    const { edits, kept } = cleanupEdits(plan, 'ipv4', parseSave(withForeign));
    const text = renderEdits(edits);
    expect(text).not.toContain('-X ISTIO_REDIRECT');
    expect(text).toContain('-X ISTIO_OUTPUT');
    expect(kept).toEqual(['nat ISTIO_REDIRECT (still used by USER-CHAIN)']);
  });
});

describe('convergeEdits', () => {
  it("flushes but keeps a stale chain of ours that someone else's chain still jumps to", async () => {
    const { convergeEdits } = await import('../../../src/exec/transaction.js');
    const old = renderSaveFamily(planFor([...ISTIO_INIT_ARGS, '--redirect-dns', '--capture-all-dns', '--ipv6', 'off']), 'ipv4').join('\n');
    // nat is the last table in save order: the foreign chain and its rule go there.
    const last = old.lastIndexOf('COMMIT');
    const withForeign = `${old.slice(0, last).replace('*nat\n', '*nat\n:USER-CHAIN - [0:0]\n')}-A USER-CHAIN -j ISTIO_OUTPUT_DNS\n${old.slice(last)}`;
    const text = renderEdits(convergeEdits(planFor([...ISTIO_INIT_ARGS, '--ipv6', 'off']), 'ipv4', parseSave(withForeign)));
    const nat = text.slice(text.indexOf('*nat'), text.indexOf('COMMIT', text.indexOf('*nat')));
    expect(nat).toContain(':ISTIO_OUTPUT_DNS - [0:0]');
    expect(nat).not.toContain('-X ISTIO_OUTPUT_DNS');
    expect(text).toContain('-X ISTIO_OUTPUT_DNS'); // the raw table's copy has no foreign user
  });
});

describe('a bare family (the apply skips its comparison)', () => {
  const BARE_SAVES = [
    '',
    '*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\nCOMMIT\n*mangle\n:PREROUTING ACCEPT [3:180]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n',
  ];
  const PLANS = [
    [...ISTIO_INIT_ARGS, '--ipv6', 'on'],
    [...ISTIO_INIT_ARGS, '--redirect-dns', '--capture-all-dns', '--ipv6', 'on'],
    ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '-i', '*', '--ipv6', 'on'],
    [...ISTIO_INIT_ARGS, '-o', '3306', '-q', '8080', '-x', '203.0.113.0/24', '--ipv6', 'on'],
  ];

  it.each(BARE_SAVES.map((s, i) => [i, s] as const))('gets the same edits with no ownership as with the plan\'s (bare state %i)', async (_i, save) => {
    const { convergeEdits, isBare, NO_OWNERSHIP, ownershipFor, plansRules } = await import('../../../src/exec/transaction.js');
    const state = parseSave(save);
    expect(isBare(state)).toBe(true);
    for (const argv of PLANS) {
      const plan = planFor(argv);
      for (const family of plan.families) {
        expect(plansRules(plan, family)).toBe(true);
        expect(renderEdits(convergeEdits(plan, family, state, NO_OWNERSHIP))).toBe(renderEdits(convergeEdits(plan, family, state, ownershipFor(plan, family))));
      }
    }
  });

  it('is not bare with anyone\'s rule or chain in it', async () => {
    const { isBare } = await import('../../../src/exec/transaction.js');
    expect(isBare(parseSave('*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -j ACCEPT\nCOMMIT\n'))).toBe(false);
    expect(isBare(parseSave('*filter\n:INPUT ACCEPT [0:0]\n:USER-CHAIN - [0:0]\nCOMMIT\n'))).toBe(false);
    expect(isBare(parseSave(renderSaveFamily(planFor([...ISTIO_INIT_ARGS, '--ipv6', 'off']), 'ipv4').join('\n')))).toBe(false);
  });
});

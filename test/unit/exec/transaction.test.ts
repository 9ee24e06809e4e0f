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

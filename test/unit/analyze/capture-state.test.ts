import { describe, expect, it } from 'vitest';
import { classifyCapture } from '../../../src/analyze/capture-state.js';
import type { DriftItem } from '../../../src/analyze/drift.js';
import { isBuiltinChain } from '../../../src/model/chains.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

const plan = planFor([...ISTIO_INIT_ARGS, '--ipv6', 'off']);
/** The drift items of the plan's rules in builtin chains, as the comparison names a missing rule. */
const steering: DriftItem[] = plan.rules.filter((r) => isBuiltinChain(r.chain, r.table)).map((r, i) => ({ kind: 'rule', text: `-A ${r.chain} -rule-${i} (${r.table}, ipv4)` }));
const chainRule: DriftItem = { kind: 'rule', text: '-A ISTIO_OUTPUT -j ISTIO_REDIRECT (nat, ipv4)' };

describe('classifyCapture', () => {
  it('has steering rules to count in the sidecar plan (else every check below proves nothing)', () => {
    expect(steering.length).toBeGreaterThanOrEqual(2);
  });

  it('calls an equal namespace captured', () => {
    expect(classifyCapture({ missing: [], unexpected: [] }, plan, false)).toBe('captured');
  });

  it('calls a namespace bypassing when every rule of ours in a builtin chain is missing (a flush), whatever else is', () => {
    expect(classifyCapture({ missing: [...steering, chainRule], unexpected: [] }, plan, false)).toBe('bypassing');
    expect(classifyCapture({ missing: steering, unexpected: [] }, plan, false)).toBe('bypassing');
  });

  it('calls it drifted when some steering rule is still there, or when something of ours should not be there', () => {
    expect(classifyCapture({ missing: steering.slice(1), unexpected: [] }, plan, false)).toBe('drifted');
    expect(classifyCapture({ missing: [chainRule], unexpected: [] }, plan, false)).toBe('drifted');
    expect(classifyCapture({ missing: steering, unexpected: [chainRule] }, plan, false)).toBe('drifted');
  });

  it('calls native nftables bypassing when our tables are gone, drifted when their rules differ', () => {
    expect(classifyCapture({ missing: [{ kind: 'table', text: 'inet istio-proxy-nat' }], unexpected: [] }, plan, true)).toBe('bypassing');
    expect(classifyCapture({ missing: [{ kind: 'rule', text: 'jump istio-output (inet istio-proxy-nat)' }], unexpected: [] }, plan, true)).toBe('drifted');
  });
});

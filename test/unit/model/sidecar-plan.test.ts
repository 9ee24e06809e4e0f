import { describe, expect, it } from 'vitest';
import { checkPlanInvariants } from '../../../src/model/invariants.js';
import { rule } from '../../../src/model/clauses.js';
import { simulateChains } from '../../../src/render/save.js';
import { renderRestore } from '../../../src/render/restore.js';
import { PlanError } from '../../../src/errors.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

describe('the sidecar plan', () => {
  it('adds policy routing only for TPROXY with inbound capture, per family', () => {
    const tp = planFor(['-m', 'TPROXY', '-b', '*', '-t', '1337', '-r', '133', '--ipv6', 'on']);
    expect(tp.ipRules).toEqual([
      { family: 'ipv4', mark: 1337, table: 133 },
      { family: 'ipv6', mark: 1337, table: 133 },
    ]);
    expect(tp.routes).toEqual([
      { family: 'ipv4', table: 133 },
      { family: 'ipv6', table: 133 },
    ]);
    expect(planFor(['-m', 'TPROXY', '-b', '', '--ipv6', 'on']).ipRules).toEqual([]);
    expect(planFor([...ISTIO_INIT_ARGS, '--ipv6', 'on']).ipRules).toEqual([]);
  });

  it('adds ::6/128 on lo only when IPv6 is on', () => {
    expect(planFor([...ISTIO_INIT_ARGS, '--ipv6', 'on']).addresses).toEqual([{ family: 'ipv6', cidr: '::6/128', device: 'lo' }]);
    expect(planFor([...ISTIO_INIT_ARGS, '--ipv6', 'off']).addresses).toEqual([]);
  });

  it('gives every rule a purpose and only touches builtin or ISTIO_ chains', () => {
    const plan = planFor(['-m', 'TPROXY', '-b', '*', '-i', '*', '-k', 'eth1', '-c', 'eth2', '--redirect-dns', '--capture-all-dns', '--drop-invalid', '--ipv6', 'on']);
    for (const r of plan.rules) {
      expect(r.purpose).toMatch(/^[a-z0-9-]+$/);
      expect(r.chain).toMatch(/^(PREROUTING|OUTPUT|ISTIO_[A-Z_]+)$/);
    }
  });

  it('keeps family-specific CIDRs in their own family', () => {
    const plan = planFor(['-i', '192.0.2.0/24,2001:db8::/32', '-x', '198.51.100.0/24', '--ipv6', 'on']);
    expect(renderRestore(plan, 'ipv4')).toContain('-A ISTIO_OUTPUT -d 192.0.2.0/24 -j ISTIO_REDIRECT');
    expect(renderRestore(plan, 'ipv4')).not.toContain('2001:db8');
    expect(renderRestore(plan, 'ipv6')).toContain('-A ISTIO_OUTPUT -d 2001:db8::/32 -j ISTIO_REDIRECT');
    expect(renderRestore(plan, 'ipv6')).not.toContain('198.51.100');
  });

  it('rejects a rule in a chain that is not ours', () => {
    const bad = { families: ['ipv4'] as const, rules: [rule('nat', 'KUBE-SERVICES', [], { k: 'jump', chain: 'RETURN' }, 'x')], ipRules: [], routes: [], addresses: [], ipsets: [] };
    expect(() => checkPlanInvariants(bad)).toThrow(PlanError);
  });
});

describe('simulateChains', () => {
  it('places inserts where the kernel would: relative to the chain at that moment', () => {
    const r = (name: string, insert?: number) => rule('nat', 'PREROUTING', [], { k: 'jump', chain: 'RETURN' }, name, insert === undefined ? {} : { insert });
    const order = simulateChains([r('a'), r('b', 1), r('c', 1), r('d'), r('e', 9)]).get('PREROUTING')?.map((x) => x.purpose);
    expect(order).toEqual(['c', 'b', 'a', 'd', 'e']);
  });
});

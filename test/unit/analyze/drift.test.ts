import { describe, expect, it } from 'vitest';
import { compareRules, formatDriftJson, formatDriftLines } from '../../../src/analyze/drift.js';
import { parseSave } from '../../../src/exec/state.js';
import { expectedState, ownershipFor } from '../../../src/exec/transaction.js';
import { renderSaveFamily } from '../../../src/render/save.js';
import { FOREIGN_V4 } from '../../fixtures/foreign-rules.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

const plan = planFor([...ISTIO_INIT_ARGS, '--ipv6', 'off']);
const applied = renderSaveFamily(plan, 'ipv4').join('\n');
const compare = (text: string) => compareRules(parseSave(text), expectedState(plan, 'ipv4'), ownershipFor(plan, 'ipv4'), 'ipv4');

describe('the one comparison of our rules', () => {
  it('finds nothing when the namespace holds exactly the plan, whatever foreign rules sit beside it', () => {
    expect(compare(applied).drift).toEqual({ missing: [], unexpected: [] });
    const withForeign = applied
      .replace(':ISTIO_INBOUND - [0:0]', ':CNI-HOSTPORT-DNAT - [0:0]\n:ISTIO_INBOUND - [0:0]')
      .replace('-A OUTPUT -j ISTIO_OUTPUT', '-A OUTPUT -o eth9 -j RETURN\n-A OUTPUT -j ISTIO_OUTPUT\n-A POSTROUTING -s 198.51.100.0/24 -j MASQUERADE\n-A CNI-HOSTPORT-DNAT -p tcp -m tcp --dport 8443 -j DNAT --to-destination 198.51.100.2:443');
    expect(withForeign).toContain('MASQUERADE');
    expect(compare(`${FOREIGN_V4.split('*nat')[0]}${withForeign}`).drift).toEqual({ missing: [], unexpected: [] });
  });

  it('names a missing rule, an unexpected rule and a rule out of order in iptables-save spelling', () => {
    const moved = applied
      .replace('-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN\n', '')
      .replace('-A ISTIO_OUTPUT -j ISTIO_REDIRECT', '-A ISTIO_OUTPUT -j ISTIO_REDIRECT\n-A ISTIO_OUTPUT -d 192.0.2.1/32 -j RETURN');
    const { drift, residue } = compare(moved);
    expect(residue).toBe(true);
    expect(formatDriftLines(drift)).toEqual(['missing: -A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN (nat, ipv4)', 'unexpected: -A ISTIO_OUTPUT -d 192.0.2.1/32 -j RETURN (nat, ipv4)']);
  });

  it('reports a whole chain missing as -N and its rules, and an empty namespace as no residue', () => {
    const { drift, residue } = compare('');
    expect(residue).toBe(false);
    expect(drift.missing.map((i) => i.text)).toContain('-N ISTIO_REDIRECT (nat, ipv4)');
    expect(drift.missing.map((i) => i.text)).toContain('-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001 (nat, ipv4)');
    expect(JSON.parse(formatDriftJson(drift))).toMatchObject({ equal: false, unexpected: [] });
  });

  it('prints routing differences with their kind', () => {
    expect(formatDriftLines({ missing: [{ kind: 'route', text: 'local ::/0 dev lo table 133' }], unexpected: [] })).toEqual(['missing route: local ::/0 dev lo table 133']);
  });
});

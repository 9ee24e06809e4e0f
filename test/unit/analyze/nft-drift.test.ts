import { describe, expect, it } from 'vitest';
import { diffNftState, splitNftTables } from '../../../src/analyze/nft-drift.js';
import { formatDriftLines } from '../../../src/analyze/drift.js';

const OURS = 'table inet istio-proxy-nat {\n\tchain output {\n\t\ttype nat hook output priority -100; policy accept;\n\t\tcounter jump istio-output\n\t}\n}';
const FOREIGN = 'table inet foreign {\n\tchain c {\n\t}\n}';
const OWNED = ['istio-proxy-nat', 'istio-proxy-mangle', 'istio-proxy-raw'];

describe('native nftables drift', () => {
  it('splits a listing into its tables', () => {
    expect([...splitNftTables(`${FOREIGN}\n${OURS}\n`).keys()]).toEqual(['inet foreign', 'inet istio-proxy-nat']);
  });

  it('finds no difference when our tables match, whatever foreign tables exist', () => {
    expect(diffNftState(`${OURS}\n`, `${FOREIGN}\n${OURS}\n`, OWNED, [])).toEqual({ missing: [], unexpected: [] });
  });

  it('names a missing table, an unexpected one and the first differing line', () => {
    const mangle = 'table inet istio-proxy-mangle {\n}';
    expect(formatDriftLines(diffNftState(`${OURS}\n`, `${mangle}\n`, OWNED, []))).toEqual(['missing table: inet istio-proxy-nat', 'unexpected table: inet istio-proxy-mangle']);
    const changed = OURS.replace('counter jump istio-output', 'counter accept');
    expect(formatDriftLines(diffNftState(OURS, changed, OWNED, []))).toEqual([
      'missing: chain output: counter jump istio-output (inet istio-proxy-nat)',
      'unexpected: chain output: counter accept (inet istio-proxy-nat)',
    ]);
  });

  it('reports iptables capture chains next to the native tables', () => {
    expect(formatDriftLines(diffNftState(OURS, OURS, OWNED, ['ip nat ISTIO_OUTPUT']))).toEqual(['unexpected: ip nat ISTIO_OUTPUT (iptables, next to the native tables)']);
  });
});

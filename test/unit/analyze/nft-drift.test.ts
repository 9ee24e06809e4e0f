import { describe, expect, it } from 'vitest';
import { diffNftState, splitNftTables } from '../../../src/analyze/nft-drift.js';

const OURS = 'table inet istio-proxy-nat {\n\tchain output {\n\t\ttype nat hook output priority -100; policy accept;\n\t\tcounter jump istio-output\n\t}\n}';
const FOREIGN = 'table inet foreign {\n\tchain c {\n\t}\n}';
const OWNED = ['istio-proxy-nat', 'istio-proxy-mangle', 'istio-proxy-raw'];

describe('native nftables drift', () => {
  it('splits a listing into its tables', () => {
    expect([...splitNftTables(`${FOREIGN}\n${OURS}\n`).keys()]).toEqual(['inet foreign', 'inet istio-proxy-nat']);
  });

  it('finds no difference when our tables match, whatever foreign tables exist', () => {
    expect(diffNftState(`${OURS}\n`, `${FOREIGN}\n${OURS}\n`, OWNED, [])).toEqual([]);
  });

  it('names a missing table, an unexpected one and the first differing line', () => {
    const mangle = 'table inet istio-proxy-mangle {\n}';
    expect(diffNftState(`${OURS}\n`, `${mangle}\n`, OWNED, [])).toEqual(['table inet istio-proxy-nat is missing', 'table inet istio-proxy-mangle is present but this config has none']);
    const changed = OURS.replace('counter jump istio-output', 'counter accept');
    expect(diffNftState(OURS, changed, OWNED, [])).toEqual(['table inet istio-proxy-nat differs: expected "counter jump istio-output", found "counter accept"']);
  });

  it('reports iptables capture chains next to the native tables', () => {
    expect(diffNftState(OURS, OURS, OWNED, ['ip nat ISTIO_OUTPUT'])).toEqual(['iptables capture chains are present next to the native tables: ip nat ISTIO_OUTPUT']);
  });
});

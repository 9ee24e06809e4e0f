import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { looksLikeNftText, parseNftRuleset } from '../../../src/inspect/nft-ruleset.js';
import { cidr, type Family } from '../../../src/model/cidr.js';
import type { Packet } from '../../../src/trace/packet.js';
import { traceFlow, type Flow } from '../../../src/trace/walk.js';

const LISTINGS = join(import.meta.dirname, '../../conformance/nft-listings');
const listings = ['sidecar', 'ambient'].flatMap((dir) => readdirSync(join(LISTINGS, dir)).map((f) => ({ name: `${dir}/${f}`, text: readFileSync(join(LISTINGS, dir, f), 'utf8') })));

describe('the nft parser on every recorded nft 1.0.6 listing of an Istio golden', () => {
  it.each(listings.map((l) => [l.name, l.text] as const))('reads %s whole: every rule into model clauses and a target', (_name, text) => {
    expect(looksLikeNftText(text)).toBe(text.includes('table '));
    const rs = parseNftRuleset(text);
    expect(rs.problems).toEqual([]);
    const lines = text.split('\n').filter((l) => /^\t\t/.test(l) && !/^\t\t(type |comment |elements )/.test(l));
    const rules = rs.tables.flatMap((t) => t.rules);
    // Every rule line is read once per family its inet table holds.
    expect(rules.length).toBe(lines.length * 2);
    for (const r of rules) {
      expect(r.match.filter((c) => c.k === 'foreign'), r.spec).toEqual([]);
      expect(r.target.k, r.spec).not.toBe('other');
    }
  });

  it.each(listings.map((l) => [l.name, l.text] as const))('walks %s to a decided verdict for outbound, local and inbound flows of each family', (_name, text) => {
    const rs = parseNftRuleset(text);
    const families = [...new Set(rs.tables.map((t) => t.family))];
    for (const family of families) {
      const a = (v4: string, v6: string) => cidr(family === 'ipv4' ? `${v4}/32` : `${v6}/128`).bytes;
      const base: Packet = { family, proto: 'tcp', src: a('198.51.100.2', '2001:db8::2'), dst: a('203.0.113.7', '2001:db8:1::7'), sport: 40000, dport: 80, owner: { uid: 1000, gid: 1000 }, mark: 0, ctmark: 0, inIface: '', outIface: 'eth0', natted: { dnat: false, snat: false } };
      const flows: Flow[] = [
        { direction: 'outbound', local: false, packet: base },
        { direction: 'outbound', local: false, packet: { ...base, proto: 'udp', dport: 53 } },
        { direction: 'outbound', local: true, packet: { ...base, dst: base.src ?? [], outIface: 'lo', owner: { uid: 1337, gid: 1337 } } },
        { direction: 'inbound', local: false, packet: { ...base, src: base.dst, dst: base.src ?? [], owner: undefined, inIface: 'eth0', outIface: '' } },
      ];
      for (const flow of flows) expect(traceFlow(flow, rs.tables, { sets: rs.sets }).verdict.k, `${family as Family} ${flow.direction}`).not.toBe('unknown');
    }
    expect(families.length).toBeGreaterThan(0);
  });

  it('reads the base chains, their hooks and priorities, and the sets with their elements', () => {
    const rs = parseNftRuleset(`table inet t {\n\tset s4 {\n\t\ttype ipv4_addr\n\t\telements = { 192.0.2.7, 198.51.100.0/24,\n\t\t\t     203.0.113.9 comment "x" }\n\t}\n\n\tchain output {\n\t\ttype nat hook output priority mangle + 5; policy drop;\n\t\tip daddr @s4 counter packets 3 bytes 180 return\n\t}\n}\n`);
    const [v4] = rs.tables;
    expect(v4?.label).toBe('inet t');
    expect(v4?.chains).toEqual([{ name: 'output', policy: 'DROP', base: { type: 'nat', hook: 'output', priority: -145 } }]);
    expect(v4?.rules[0]?.printed).toBe('ip daddr @s4 counter return');
    expect(rs.sets.get('inet t s4')?.map((c) => c.text)).toEqual(['192.0.2.7/32', '198.51.100.0/24', '203.0.113.9/32']);
  });

  it("leaves iptables-nft's own tables to iptables-nft-save", () => {
    const rs = parseNftRuleset('table ip nat {\n\tchain OUTPUT {\n\t\ttype nat hook output priority -100; policy accept;\n\t\tcounter jump ISTIO_OUTPUT\n\t}\n}\ntable ip6 mine {\n\tchain c {\n\t}\n}\n');
    expect(rs.tables.map((t) => `${t.family} ${t.label ?? ''}`)).toEqual(['ipv6 ip6 mine']);
  });
});

import { describe, expect, it } from 'vitest';
import { splitWords } from '../../../src/inspect/nft-text.js';
import { parseNftRuleWords } from '../../../src/inspect/nft-rule.js';
import { parseNftRuleset } from '../../../src/inspect/nft-ruleset.js';
import { cidr } from '../../../src/model/cidr.js';
import { traceFlow } from '../../../src/trace/walk.js';
import type { Packet } from '../../../src/trace/packet.js';

const read = (rule: string) => parseNftRuleWords(splitWords(rule), { setKey: (n) => n });

describe('nft rule words into the model clauses and targets', () => {
  it('reads addresses, prefixes, negations, port sets and ranges, owners and masked marks', () => {
    expect(read('oifname "eth*" ip daddr != 192.0.2.0/24 tcp dport != { 53, 15008 } meta skuid 1337 counter jump istio-in-redirect')).toEqual({
      match: [
        { k: 'out', iface: 'eth+' },
        { k: 'nfproto', family: 'ipv4' },
        { k: 'dst', not: true, addr: cidr('192.0.2.0/24') },
        { k: 'proto', proto: 'tcp' },
        { k: 'multiport', not: true, ports: [53, 15008] },
        { k: 'owner', kind: 'uid', id: { text: '1337', id: 1337 } },
      ],
      target: { k: 'jump', chain: 'istio-in-redirect' },
    });
    expect(read('udp dport 1000-2000 meta skgid != 7 meta mark & 0x00000fff != 0x00000539 counter return').match).toEqual([
      { k: 'proto', proto: 'udp' },
      { k: 'port-range', dir: 'dport', not: false, from: 1000, to: 2000 },
      { k: 'owner', kind: 'gid', not: true, id: { text: '7', id: 7 } },
      { k: 'mark', not: true, mark: 0x539, mask: 0xfff },
    ]);
  });

  it('reads the statements meshcap and Istio write as the model targets', () => {
    expect(read('meta l4proto tcp ip daddr != 127.0.0.1 tproxy ip to :15006 meta mark set 0x00000539 counter accept').target).toEqual({ k: 'tproxy', port: 15006, mark: 0x539, mask: 0xffffffff });
    expect(read('meta mark & 0x00000fff == 0x00000539 counter ct mark set ct mark & 0xfffff111 | 0x00000111').target).toEqual({ k: 'connmark-set', mark: 0x111, mask: 0xfff });
    expect(read('ct mark set meta mark').target).toEqual({ k: 'connmark', op: 'save' });
    expect(read('meta mark set ct mark').target).toEqual({ k: 'connmark', op: 'restore' });
    expect(read('counter redirect to :15001').target).toEqual({ k: 'redirect', port: 15001, spelling: 'to-ports' });
    expect(read('snat ip to 169.254.7.127').target).toEqual({ k: 'snat', to: cidr('169.254.7.127/32') });
    expect(read('dnat ip to 192.0.2.1:8080').target).toEqual({ k: 'dnat', addr: cidr('192.0.2.1/32'), port: 8080 });
    expect(read('udp dport 53 counter ct zone set 1').target).toEqual({ k: 'ct-zone', zone: 1 });
    expect(read('goto elsewhere').target).toEqual({ k: 'goto', chain: 'elsewhere' });
    expect(read('notrack').target).toEqual({ k: 'notrack' });
    expect(read('counter').target).toEqual({ k: 'none' });
  });

  it.each([
    'fib daddr type local counter accept',
    'meta l4proto { tcp, udp } counter accept',
    'ip daddr { 192.0.2.1, 192.0.2.2 } accept',
    'meta mark set 0x1 ip daddr 192.0.2.1 accept',
    'meta l4proto tcp tproxy ip to :15006',
    'meta skuid "nobody" accept',
    'queue num 3',
    'limit rate 10/second accept',
  ])('leaves %s as unknown, never a guess', (rule) => {
    const r = read(rule);
    expect(r.target.k === 'other' || r.match.some((c) => c.k === 'foreign')).toBe(true);
  });
});

describe('a walk that meets a foreign nft rule', () => {
  const packet: Packet = { family: 'ipv4', proto: 'tcp', src: cidr('198.51.100.2/32').bytes, dst: cidr('203.0.113.7/32').bytes, sport: 40000, dport: 80, owner: { uid: 0, gid: 0 }, mark: 0, ctmark: 0, inIface: '', outIface: 'eth0', natted: { dnat: false, snat: false } };
  const ruleset = (rule: string) => `table inet t {\n\tchain output {\n\t\ttype filter hook output priority filter; policy accept;\n\t\ttcp dport 9999 counter drop\n\t\t${rule}\n\t}\n}\n`;

  it('answers unknown naming the rule as nft prints it', () => {
    const rs = parseNftRuleset(ruleset('fib daddr type local counter packets 4 bytes 240 accept'));
    const r = traceFlow({ direction: 'outbound', packet, local: false }, rs.tables, { sets: rs.sets });
    expect(r.verdict).toMatchObject({ k: 'unknown', table: 'inet t', chain: 'output', rule: 'fib daddr type local counter accept' });
  });

  it('passes it by when an earlier match of the rule already failed', () => {
    const rs = parseNftRuleset(ruleset('tcp dport 443 fib daddr type local counter drop'));
    expect(traceFlow({ direction: 'outbound', packet, local: false }, rs.tables, { sets: rs.sets }).verdict).toEqual({ k: 'pass' });
  });

  it('ends everything at a drop, but only its own base chain at an accept', () => {
    const two = 'table inet a {\n\tchain output {\n\t\ttype filter hook output priority -10; policy accept;\n\t\taccept\n\t}\n}\ntable inet b {\n\tchain output {\n\t\ttype filter hook output priority 10; policy accept;\n\t\ttcp dport 80 drop\n\t}\n}\n';
    const rs = parseNftRuleset(two);
    const r = traceFlow({ direction: 'outbound', packet, local: false }, rs.tables, { sets: rs.sets });
    expect(r.verdict).toEqual({ k: 'drop' });
    expect(r.path.map((s) => `${s.table}: ${s.rule}`)).toEqual(['inet a: accept', 'inet b: tcp dport 80 drop']);
  });
});

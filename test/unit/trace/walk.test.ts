import { describe, expect, it } from 'vitest';
import { parseSaveText } from '../../../src/inspect/save-text.js';
import { cidr } from '../../../src/model/cidr.js';
import { renderSaveDryRun } from '../../../src/render/save.js';
import type { Packet } from '../../../src/trace/packet.js';
import { traceFlow, type Direction } from '../../../src/trace/walk.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

const v4 = (s: string) => cidr(`${s}/32`).bytes;

function packet(over: Partial<Packet> & { dst: readonly number[]; dport: number }): Packet {
  return { family: 'ipv4', proto: 'tcp', src: v4('198.51.100.2'), sport: 40000, owner: { uid: 1000, gid: 1000 }, mark: 0, ctmark: 0, inIface: '', outIface: 'eth0', natted: { dnat: false, snat: false }, ...over };
}

function trace(save: string, direction: Direction, p: Packet, local = false) {
  const tables = parseSaveText(save).tables;
  return traceFlow({ direction, packet: p, local }, tables, { sets: new Map([['allowed', [cidr('203.0.113.0/24')]]]) });
}

const ISTIO_INIT = renderSaveDryRun(planFor([...ISTIO_INIT_ARGS, '--ipv6', 'off']));
const TPROXY = renderSaveDryRun(planFor(['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*', '--ipv6', 'off']));

describe("the walk over istio-init's default rules", () => {
  it("redirects the app's outbound connection to 15001 through OUTPUT, ISTIO_OUTPUT and ISTIO_REDIRECT", () => {
    const r = trace(ISTIO_INIT, 'outbound', packet({ dst: v4('203.0.113.10'), dport: 80 }));
    expect(r.verdict).toEqual({ k: 'redirect', port: 15001 });
    expect(r.path.map((s) => `${s.table} ${s.chain}`)).toEqual(['nat OUTPUT', 'nat ISTIO_OUTPUT', 'nat ISTIO_REDIRECT']);
  });

  it("lets the proxy's own connection pass at its uid RETURN", () => {
    const r = trace(ISTIO_INIT, 'outbound', packet({ dst: v4('203.0.113.10'), dport: 80, owner: { uid: 1337, gid: 1337 } }));
    expect(r.verdict).toEqual({ k: 'pass' });
    expect(r.path.at(-1)?.rule).toBe('-A ISTIO_OUTPUT -m owner --uid-owner 1337 -j RETURN');
  });

  it('sends the proxy\'s connection to its own pod address over lo to inbound capture', () => {
    const r = trace(ISTIO_INIT, 'outbound', packet({ dst: v4('198.51.100.2'), dport: 8080, outIface: 'lo', owner: { uid: 1337, gid: 1337 } }), true);
    expect(r.verdict).toEqual({ k: 'redirect', port: 15006 });
  });

  it('redirects inbound to 15006 but lets an excluded port (-d) through', () => {
    const inbound = (dport: number) => trace(ISTIO_INIT, 'inbound', packet({ dst: v4('198.51.100.2'), dport, src: v4('203.0.113.7'), owner: undefined, inIface: 'eth0', outIface: '' }));
    expect(inbound(8080).verdict).toEqual({ k: 'redirect', port: 15006 });
    expect(inbound(15021).verdict).toEqual({ k: 'pass' });
  });
});

describe('the walk in TPROXY mode', () => {
  it('sends inbound through TPROXY to 15006 and sets the mark on the way', () => {
    const r = trace(TPROXY, 'inbound', packet({ dst: v4('198.51.100.2'), dport: 8080, src: v4('203.0.113.7'), owner: undefined, inIface: 'eth0', outIface: '' }));
    expect(r.verdict).toEqual({ k: 'tproxy', port: 15006 });
    expect(r.path.map((s) => s.chain)).toContain('ISTIO_TPROXY');
  });

  it('marks the proxy\'s lo connection 1338 in mangle OUTPUT, so the way back in on lo is not TPROXYed', () => {
    const r = trace(TPROXY, 'outbound', packet({ dst: v4('198.51.100.2'), dport: 8080, outIface: 'lo', owner: { uid: 1337, gid: 1337 } }), true);
    expect(r.path.some((s) => s.rule.includes('--set-xmark 0x53a/0xffffffff'))).toBe(true);
    expect(r.verdict).toEqual({ k: 'redirect', port: 15006 });
  });
});

describe('the walk over DNS capture (UDP)', () => {
  const DNS = renderSaveDryRun(planFor([...ISTIO_INIT_ARGS, '--redirect-dns', '--dns-servers', '192.0.2.53', '--ipv6', 'off']));
  const query = (uid: number) => trace(DNS, 'outbound', packet({ proto: 'udp', dst: v4('192.0.2.53'), dport: 53, sport: undefined, owner: { uid, gid: uid } }));

  it("sends the app's DNS query to the agent on 15053, through the conntrack zone rules", () => {
    const r = query(1000);
    expect(r.verdict).toEqual({ k: 'redirect', port: 15053 });
    expect(r.path.map((s) => s.rule)).toContain('-A ISTIO_OUTPUT_DNS -d 192.0.2.53/32 -p udp -m udp --dport 53 -j CT --zone 2');
  });

  it("lets the proxy's own query out, an unknown source port being an ephemeral one no rule names", () => {
    const r = query(1337);
    expect(r.verdict).toEqual({ k: 'pass' });
    expect(r.path.map((s) => s.rule)).toContain('-A ISTIO_OUTPUT_DNS -p udp -m udp --dport 53 -m owner --uid-owner 1337 -j CT --zone 1');
  });
});

const FOREIGN = `*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:SVC - [0:0]
-A OUTPUT -p udp -m addrtype --dst-type LOCAL -j RETURN
-A OUTPUT -o eth+ -m comment --comment "services" -j SVC
-A OUTPUT -m addrtype --dst-type LOCAL -j RETURN
-A SVC -d 203.0.113.10/32 -p tcp -m multiport --dports 80,8000:8080 -j DNAT --to-destination 192.0.2.10:8080
-A SVC -m set --match-set allowed dst -m owner ! --uid-owner 1337 -j REDIRECT --to-ports 15001
-A SVC -m mark --mark 0x4000/0x4000 -g SVC2
-A SVC -j RETURN
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT DROP [0:0]
-A OUTPUT -d 192.0.2.0/24 -j ACCEPT
-A OUTPUT -m conntrack --ctstate NEW,DNAT -d 198.51.100.0/24 -j ACCEPT
-A OUTPUT -p tcp -m tcp --dport 15001 -j ACCEPT
COMMIT
`;

describe('the walk over foreign rules', () => {
  it('skips a rule whose known match fails even when another match is unknown, then DNATs through multiport', () => {
    const r = trace(FOREIGN, 'outbound', packet({ dst: v4('203.0.113.10'), dport: 8000 }));
    expect(r.verdict).toEqual({ k: 'pass', to: '192.0.2.10 port 8080' });
  });

  it('follows a set it could read and a negated owner to a REDIRECT, and the filter policy lets the redirect out', () => {
    const r = trace(FOREIGN, 'outbound', packet({ dst: v4('203.0.113.99'), dport: 443 }));
    expect(r.verdict).toEqual({ k: 'redirect', port: 15001 });
  });

  it('ends with unknown naming the rule when a match it cannot evaluate decides', () => {
    const r = trace(FOREIGN, 'outbound', packet({ dst: v4('203.0.113.99'), dport: 443, outIface: 'lo', owner: { uid: 1337, gid: 1337 } }));
    expect(r.verdict).toMatchObject({ k: 'unknown', table: 'nat', chain: 'OUTPUT', rule: '-A OUTPUT -m addrtype --dst-type LOCAL -j RETURN' });
  });

  it('drops at a DROP policy and names it in the path', () => {
    const r = trace(FOREIGN, 'outbound', packet({ dst: v4('203.0.113.99'), dport: 443, outIface: 'eth1', owner: { uid: 1337, gid: 1337 } }));
    expect(r.verdict).toMatchObject({ k: 'unknown' });
    const dropped = trace(FOREIGN.replace('-A OUTPUT -m addrtype --dst-type LOCAL -j RETURN\n', ''), 'outbound', packet({ dst: v4('203.0.113.99'), dport: 443, owner: { uid: 1337, gid: 1337 } }));
    expect(dropped.verdict).toEqual({ k: 'drop' });
    expect(dropped.path.at(-1)?.rule).toBe('-P OUTPUT DROP');
  });

  it('treats a jump to a chain that does not exist as unknown', () => {
    const r = trace(FOREIGN, 'outbound', packet({ dst: v4('203.0.113.99'), dport: 443, mark: 0x4000, owner: { uid: 1337, gid: 1337 } }));
    expect(r.verdict).toMatchObject({ k: 'unknown', rule: '-A SVC -m mark --mark 0x4000/0x4000 -g SVC2' });
  });
});

import { describe, expect, it } from 'vitest';
import { parseNftRuleset } from '../../../src/inspect/nft-ruleset.js';
import { parseSaveText } from '../../../src/inspect/save-text.js';
import { cidr, type Family } from '../../../src/model/cidr.js';
import type { NftMode } from '../../../src/model/nft/layout.js';
import { buildNftTables } from '../../../src/render/nft-transaction.js';
import { renderNftListing } from '../../../src/render/nft-listing.js';
import { renderSaveDryRun } from '../../../src/render/save.js';
import type { Packet } from '../../../src/trace/packet.js';
import { traceFlow, type Flow } from '../../../src/trace/walk.js';
import { planFor } from '../../helpers/plan.js';

const POD = { ipv4: '198.51.100.2', ipv6: '2001:db8::2' };
const PEER = { ipv4: '203.0.113.7', ipv6: '2001:db8:1::7' };
const addr = (s: string) => cidr(s.includes(':') ? `${s}/128` : `${s}/32`).bytes;

function flows(family: Family): { name: string; flow: Flow }[] {
  const base: Packet = { family, proto: 'tcp', src: addr(POD[family]), dst: addr(PEER[family]), sport: 40000, dport: 80, owner: { uid: 1000, gid: 1000 }, mark: 0, ctmark: 0, inIface: '', outIface: 'eth0', natted: { dnat: false, snat: false } };
  const inbound = (dport: number): Flow => ({ direction: 'inbound', local: false, packet: { ...base, src: addr(PEER[family]), dst: addr(POD[family]), dport, owner: undefined, inIface: 'eth0', outIface: '' } });
  return [
    { name: 'app outbound :80', flow: { direction: 'outbound', local: false, packet: base } },
    { name: 'app outbound :9090', flow: { direction: 'outbound', local: false, packet: { ...base, dport: 9090 } } },
    { name: 'proxy outbound', flow: { direction: 'outbound', local: false, packet: { ...base, owner: { uid: 1337, gid: 1337 } } } },
    { name: 'app DNS over udp', flow: { direction: 'outbound', local: false, packet: { ...base, proto: 'udp', dst: addr(family === 'ipv4' ? '192.0.2.53' : '2001:db8:53::53'), dport: 53 } } },
    { name: 'proxy to its own pod over lo', flow: { direction: 'outbound', local: true, packet: { ...base, dst: addr(POD[family]), dport: 8080, outIface: 'lo', owner: { uid: 1337, gid: 1337 } } } },
    { name: 'inbound :8080', flow: inbound(8080) },
    { name: 'inbound :15021', flow: inbound(15021) },
    { name: 'inbound :15008', flow: inbound(15008) },
  ];
}

const CONFIGS: readonly { argv: string[]; mode: NftMode }[] = [
  { mode: 'sidecar', argv: ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-b', '*', '-d', '15021', '--ipv6', 'on'] },
  { mode: 'sidecar', argv: ['-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'TPROXY', '-i', '*', '-b', '*', '-d', '15021', '-o', '9090', '--redirect-dns', '--dns-servers', '192.0.2.53', '--ipv6', 'on'] },
  { mode: 'sidecar', argv: ['-p', '15001', '-z', '15006', '-u', '1337', '-i', '203.0.113.0/24', '-x', '', '-b', '8080', '-q', '9090', '--ipv6', 'off'] },
  { mode: 'ambient', argv: ['ambient', '--inbound', 'redirect', '--redirect-dns', '--ipv6', 'on'] },
];

describe('the walk over native nft tables agrees with the walk over the same config in iptables', () => {
  it.each(CONFIGS.map((c) => [c.argv.join(' '), c] as const))('%s', (_name, c) => {
    const plan = planFor([...(c.mode === 'ambient' ? ['ambient'] : []), '--native-nftables', ...c.argv.slice(c.mode === 'ambient' ? 1 : 0)]);
    const nft = parseNftRuleset(renderNftListing(buildNftTables(plan, { mode: c.mode })));
    const ipt = parseSaveText(renderSaveDryRun(plan)).tables;
    let compared = 0;
    const captured: string[] = [];
    for (const family of plan.families) {
      for (const { name, flow } of flows(family)) {
        const viaNft = traceFlow(flow, nft.tables, { sets: nft.sets });
        const viaIptables = traceFlow(flow, ipt, { sets: undefined });
        expect(viaNft.verdict, `${family} ${name}: ${viaNft.path.map((s) => s.rule).join(' | ')}`).toEqual(viaIptables.verdict);
        compared += 1;
        if (viaNft.verdict.k !== 'pass') captured.push(`${viaNft.verdict.k} ${viaNft.path.at(-1)?.table ?? ''}`);
      }
    }
    expect(compared).toBeGreaterThanOrEqual(8);
    // The nft walk captured something, through a native table: the agreement is not two empty walks.
    expect(captured.some((v) => /^(redirect|tproxy) inet istio-/.test(v)), captured.join(', ')).toBe(true);
  });
});

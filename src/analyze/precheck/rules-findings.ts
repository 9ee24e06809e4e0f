import { describeCode } from '../codes.js';
import type { Finding } from '../findings.js';
import { Chain, Port } from '../../model/names.js';
import type { BackendRules } from '../../inspect/namespace-rules.js';
import type { FamilyRouting } from '../../inspect/routing.js';
import { targetName } from '../../inspect/targets.js';
import type { InspectedClause } from '../../inspect/types.js';
import { chainIn, listSources, type RuleSource } from './rule-sources.js';
import type { NamespaceState } from './state.js';
import { captureJumps, hasIstioChains, isAmbient, isTproxySidecar, jumpsToOurs, liveRules, meshNftTables, recordedSpecs, tproxyMarks } from './rules-view.js';

/** Findings about the rules themselves and their routing (MCP001–004, MCP030, MCP031). */

const TERMINAL = new Set(['RETURN', 'ACCEPT', 'REDIRECT', 'DNAT']);
const ENTRY_CHAINS = [['nat', 'OUTPUT'], ['nat', 'PREROUTING'], ['mangle', 'PREROUTING']] as const;

function checkPresence(state: NamespaceState): Finding[] {
  const { rules } = state;
  const native = meshNftTables(rules).map((t) => `${t.family} ${t.name}`);
  // Capture is a jump from a builtin (native: base) chain into ours, in any source; an empty mesh table is none.
  if (listSources(rules).every((b) => captureJumps(b).length === 0)) return [describeCode('MCP001')];
  const holders = [
    ...(['legacy', 'nft'] as const).filter((backend) => rules.iptables.some((b) => b.backend === backend && hasIstioChains(b))).map((backend) => `iptables-${backend}`),
    ...(native.length > 0 ? [`native nftables (${native.join(', ')})`] : []),
  ];
  const [a, ...rest] = holders;
  return a !== undefined && rest.length > 0 ? [describeCode('MCP002', { a, b: rest.join(' and ') })] : [];
}

/** Foreign rules ahead of our jump in an entry chain that end evaluation there. */
function checkPrecedence(b: BackendRules): Finding[] {
  const out: Finding[] = [];
  for (const [table, chain] of ENTRY_CHAINS) {
    const rules = liveRules(b).filter((r) => r.table === table && r.chain === chain);
    const jump = rules.findIndex(jumpsToOurs);
    if (jump < 0) continue;
    const ours = recordedSpecs(b, table, chain);
    for (const r of rules.slice(0, jump)) {
      if (ours.has(r.spec) || !TERMINAL.has(targetName(r.target) ?? '')) continue;
      out.push(describeCode('MCP003', { rule: `${b.family === 'ipv6' ? 'ip6tables' : 'iptables'}-${b.backend} -t ${table} -A ${chain} ${r.spec}` }));
    }
  }
  return out;
}

function checkIpv6(state: NamespaceState): Finding[] {
  const global = state.routing.addresses.find((a) => a.family === 'ipv6' && a.scope === 'global' && a.ifname !== 'lo');
  if (global === undefined) return [];
  const v6Capture = listSources(state.rules).some((b) => b.family === 'ipv6' && captureJumps(b).length > 0);
  return v6Capture ? [] : [describeCode('MCP004', { address: global.address })];
}

const hasLocalDefault = (routing: FamilyRouting, table: string) => routing.routes.some((r) => r.table === table && r.type === 'local' && r.dst === 'default' && r.dev === 'lo');

function checkTproxyRouting(state: NamespaceState): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const b of listSources(state.rules)) {
    const routing = state.routing[b.family];
    for (const m of tproxyMarks(b)) {
      const key = `${b.family} ${m.text}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const rule = routing.rules.find((r) => r.fwmark !== undefined && Number(r.fwmark) === m.mark && (r.fwmask === undefined ? 0xffffffff : Number(r.fwmask)) === m.mask);
      if (rule?.table === undefined || !hasLocalDefault(routing, rule.table)) out.push(describeCode('MCP030', { mark: m.text }));
    }
  }
  return out;
}

/** `--dport 15008`, as the text check before it read (a negated one included). */
const isTunnelPort = (c: InspectedClause) => c.k === 'port' && c.dir === 'dport' && c.port === Port.tunnel;

function checkTunnelExemption(state: NamespaceState): Finding[] {
  if (isAmbient(state.rules)) return [];
  const tproxy = listSources(state.rules).filter(isTproxySidecar);
  const exempt = (b: RuleSource) => liveRules(b).some((r) => r.table === 'mangle' && r.chain === chainIn(b, Chain.inbound) && r.match.some(isTunnelPort) && targetName(r.target) === 'RETURN');
  return tproxy.length > 0 && !tproxy.every(exempt) ? [describeCode('MCP031')] : [];
}

export function checkRules(state: NamespaceState): Finding[] {
  const presence = checkPresence(state);
  // Without any capture, "IPv6 is not captured" says nothing more.
  const ipv6 = presence.some((f) => f.code === 'MCP001') ? [] : checkIpv6(state);
  return [...presence, ...state.rules.iptables.flatMap(checkPrecedence), ...ipv6, ...checkTproxyRouting(state), ...checkTunnelExemption(state)];
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeNamespace } from '../../../src/analyze/precheck/precheck.js';
import type { Runner } from '../../../src/exec/runner.js';
import type { Listener } from '../../../src/inspect/listeners.js';
import { readNamespaceRules } from '../../../src/inspect/namespace-rules.js';
import type { ProcessInfo } from '../../../src/inspect/processes.js';
import type { Routing } from '../../../src/inspect/routing.js';
import { parseNftRuleset } from '../../../src/inspect/nft-ruleset.js';
import { buildNftTables } from '../../../src/render/nft-transaction.js';
import { renderNftListing } from '../../../src/render/nft-listing.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

/**
 * precheck's decisions on native nftables tables only (no iptables rule), read by the one reader from recorded
 * `nft -j list ruleset` output of meshcap's own `--native-nftables` applies (test/fixtures/nft-json).
 */
function nftRunner(fixture: string): Runner {
  const json = readFileSync(resolve(REPO_ROOT, 'test', 'fixtures', 'nft-json', `${fixture}.json`), 'utf8');
  return {
    run: async (cmd, args) => {
      if (cmd === 'nft' && args.join(' ') === '-j list ruleset') return { exitCode: 0, stdout: json, stderr: '' };
      return cmd.endsWith('-save') ? { exitCode: 0, stdout: '', stderr: '' } : { exitCode: 127, stdout: '', stderr: `${cmd}: command not found` };
    },
  };
}

const listen = (address: string, port: number, uid = 1000): Listener => ({ protocol: 'tcp', family: address.includes(':') ? 'ipv6' : 'ipv4', address, port, uid, inode: port });
const proc = (comm: string, fsuid: number, fsgid: number): ProcessInfo => ({ pid: 4000 + fsuid, comm, uid: fsuid, fsuid, gid: fsgid, fsgid, sockets: [] });
const NO_ROUTING: Routing = { ipv4: { rules: [], routes: [] }, ipv6: { rules: [], routes: [] }, addresses: [] };
const tproxyRouting = (): Routing => {
  const family = { rules: [{ fwmark: '0x539', table: '133' }], routes: [{ type: 'local', dst: 'default', dev: 'lo', table: '133' }] };
  return { ipv4: family, ipv6: family, addresses: [] };
};
/** TPROXY's proxy: root with gid 1337, known by its comm and its sockets. */
const ENVOY: ProcessInfo = { ...proc('envoy', 0, 1337), sockets: [15001, 15006, 15053] };
/** The fixture redirects DNS too (`--redirect-dns`): the proxy listens on 15053. */
const PROXY = [listen('0.0.0.0', 15001, 0), listen('0.0.0.0', 15006, 0), listen('127.0.0.1', 15053, 0)];

async function findings(fixture: string, listeners: Listener[], processes: ProcessInfo[] = [], routing: Routing = NO_ROUTING) {
  const rules = await readNamespaceRules(nftRunner(fixture), { families: ['ipv4', 'ipv6'], nftTables: true, nftRules: true });
  return analyzeNamespace({ rules, listeners, processes, routing }, { proxyUid: 1337, proxyGid: 1337, ports: undefined }).map((f) => `${f.code} ${f.port ?? f.pid ?? ''}`.trim());
}

describe('precheck on native nftables tables', () => {
  it('sidecar TPROXY: routing in place, a clean pod shows only the 15008 note', async () => {
    expect(await findings('sidecar-tproxy', [...PROXY, listen('::', 8080)], [ENVOY], tproxyRouting())).toEqual(['MCP031']);
  });

  it('sidecar TPROXY: walks the native inbound rules for loopback-only and excluded ports (-d 15021, so 15021 is by design)', async () => {
    const app = [listen('127.0.0.1', 8080), listen('0.0.0.0', 15021, 1337)];
    expect(await findings('sidecar-tproxy', [...PROXY, ...app], [ENVOY], tproxyRouting())).toEqual(['MCP031', 'MCP010 8080']);
  });

  it('sidecar TPROXY: the native mark without its policy routing, in each family', async () => {
    expect(await findings('sidecar-tproxy', PROXY, [ENVOY])).toEqual(['MCP030', 'MCP030', 'MCP031']);
  });

  it('sidecar TPROXY: reads the exempt ids out of meta skuid / skgid, and redirect ports out of redirect and tproxy', async () => {
    const procs = [ENVOY, proc('batch', 1337, 1000), proc('cron', 1000, 1337), proc('app', 1000, 1000)];
    expect(await findings('sidecar-tproxy', [listen('0.0.0.0', 15006, 0)], procs, tproxyRouting())).toEqual(['MCP031', 'MCP012 15001', 'MCP012 15053', 'MCP020 5337', 'MCP021 5000']);
  });

  it('ambient: knows ztunnel by its mark in the native tables, asks for its three ports, captures every app port', async () => {
    const ztunnel = [listen('0.0.0.0', 15001, 0), listen('0.0.0.0', 15006, 0)];
    expect(await findings('ambient', ztunnel)).toEqual(['MCP040']);
    expect(await findings('ambient', [...ztunnel, listen('0.0.0.0', 15008, 0), listen('0.0.0.0', 8080)])).toEqual([]);
    expect(await findings('ambient', [...ztunnel, listen('0.0.0.0', 15008, 0), listen('127.0.0.1', 8080)])).toEqual(['MCP010 8080']);
  });
});

/** The rules of meshcap's own native listing of a sidecar config, as the reader gives them (no iptables at all). */
function renderedNative(argv: readonly string[]) {
  const nftRules = parseNftRuleset(renderNftListing(buildNftTables(planFor(['--native-nftables', ...argv]), { mode: 'sidecar' })));
  const nftTables = [...new Set(nftRules.tables.map((t) => t.label ?? ''))].map((label) => ({ family: label.split(' ')[0] ?? '', name: label.split(' ')[1] ?? '' }));
  return { iptables: [], walked: new Map(), nftTables, nftRules, unreadable: [] };
}

describe('precheck on meshcap-rendered native listings', () => {
  const tproxy = ISTIO_INIT_ARGS.map((a) => (a === 'REDIRECT' ? 'TPROXY' : a));
  const v4Routing: Routing = { ...NO_ROUTING, ipv4: tproxyRouting().ipv4 };
  const run = (argv: readonly string[], routing: Routing, addresses: Routing['addresses'] = []) =>
    analyzeNamespace({ rules: renderedNative(argv), listeners: [...PROXY, listen('0.0.0.0', 8080)], processes: [ENVOY], routing: { ...routing, addresses } }, { proxyUid: 1337, proxyGid: 1337, ports: undefined }).map((f) => f.code);

  it('TPROXY with IPv6 off: the inet table\'s `ip daddr` tproxy rule needs IPv4 routing only', () => {
    expect(run([...tproxy, '--ipv6', 'off'], v4Routing)).toEqual(['MCP031']);
    expect(run([...tproxy, '--ipv6', 'on'], v4Routing)).toEqual(['MCP030', 'MCP031']);
  });

  it('REDIRECT with IPv6 off still captures IPv6 (family-neutral jumps, as Istio\'s goldens pin): no MCP004', () => {
    const v6 = [{ family: 'ipv6' as const, address: '2001:db8:1::2', scope: 'global', ifname: 'eth0' }];
    expect(run([...ISTIO_INIT_ARGS, '--ipv6', 'off'], NO_ROUTING, v6)).toEqual([]);
  });
});

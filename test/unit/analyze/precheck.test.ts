import { describe, expect, it } from 'vitest';
import { analyzeNamespace } from '../../../src/analyze/precheck/precheck.js';
import type { Listener } from '../../../src/inspect/listeners.js';
import type { ProcessInfo } from '../../../src/inspect/processes.js';
import type { Routing } from '../../../src/inspect/routing.js';
import { readNamespaceRules } from '../../../src/inspect/namespace-rules.js';
import type { Runner } from '../../../src/exec/runner.js';
import { renderSaveDryRun } from '../../../src/render/save.js';
import { splitDryRunFamilies } from '../../helpers/netns.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

/**
 * precheck's decisions on the rules meshcap itself renders (read back through the rules reader from a runner
 * that answers iptables-nft-save with the dry-run text), for the configurations the root suite does not apply.
 */
function savingRunner(argv: readonly string[], edit: (ipv4: string) => string = (t) => t): Runner {
  const { ipv4: rendered, ipv6 } = splitDryRunFamilies(renderSaveDryRun(planFor(argv)));
  const ipv4 = edit(rendered);
  const out: Record<string, string> = { 'iptables-nft-save': `${ipv4}\n`, 'ip6tables-nft-save': `${ipv6}\n`, 'iptables-legacy-save': '', 'ip6tables-legacy-save': '' };
  return { run: async (cmd) => (cmd in out ? { exitCode: 0, stdout: out[cmd] ?? '', stderr: '' } : { exitCode: 127, stdout: '', stderr: `${cmd}: command not found` }) };
}

const listen = (address: string, port: number, uid = 1000): Listener => ({ protocol: 'tcp', family: address.includes(':') ? 'ipv6' : 'ipv4', address, port, uid, inode: port });
const proc = (comm: string, fsuid: number, fsgid: number): ProcessInfo => ({ pid: 4000 + fsuid, comm, uid: fsuid, fsuid, gid: fsgid, fsgid, sockets: [] });
const PROXY = [listen('0.0.0.0', 15001, 1337), listen('0.0.0.0', 15006, 1337)];
const NO_ROUTING: Routing = { ipv4: { rules: [], routes: [] }, ipv6: { rules: [], routes: [] }, addresses: [] };

/** Ambient's policy routing (mark 0x111/0xfff → table 100), as `ip -j` prints it. */
const AMBIENT_ROUTING: Routing = { ...NO_ROUTING, ipv4: { rules: [{ fwmark: '0x111', fwmask: '0xfff', table: '100' }], routes: [{ type: 'local', dst: 'default', dev: 'lo', table: '100' }] } };

async function findings(argv: readonly string[], listeners: Listener[], processes: ProcessInfo[] = [], ports?: number[], routing: Routing = NO_ROUTING, edit?: (ipv4: string) => string) {
  const rules = await readNamespaceRules(savingRunner([...argv, '--ipv6', 'off'], edit), { families: ['ipv4', 'ipv6'], nftTables: true });
  return analyzeNamespace({ rules, listeners, processes, routing }, { proxyUid: 1337, proxyGid: 1337, ports }).map((f) => `${f.code} ${f.port ?? f.pid ?? ''}`.trim());
}

const withArgs = (replace: Record<string, string>) => ISTIO_INIT_ARGS.map((a, i) => (ISTIO_INIT_ARGS[i - 1] !== undefined && replace[ISTIO_INIT_ARGS[i - 1]!] !== undefined ? replace[ISTIO_INIT_ARGS[i - 1]!]! : a));

describe('precheck on meshcap-rendered rules', () => {
  it('with an inbound port list, judges listeners by that list', async () => {
    const argv = withArgs({ '-b': '8080' });
    expect(await findings(argv, [...PROXY, listen('127.0.0.1', 8080), listen('0.0.0.0', 9000)])).toEqual(['MCP010 8080', 'MCP013 9000']);
  });

  it('with excluded inbound ports, reports a listener on one of them, and not the by-design ones', async () => {
    const argv = withArgs({ '-d': '15090,15021,15020,7070' });
    expect(await findings(argv, [...PROXY, listen('0.0.0.0', 7070), listen('0.0.0.0', 15021, 1337), listen('::', 8080)])).toEqual(['MCP013 7070']);
  });

  it('without inbound capture, checks only the ports given with --port', async () => {
    const argv = withArgs({ '-b': '' });
    expect(await findings(argv, [...PROXY, listen('127.0.0.1', 8080)])).toEqual([]);
    expect(await findings(argv, [...PROXY, listen('127.0.0.1', 8080)], [], [8080, 8081])).toEqual(['MCP010 8080']);
  });

  it('exempts every uid and gid of the rules, and never the proxy processes', async () => {
    const argv = withArgs({ '-u': '1337,1338' });
    const procs = [proc('envoy', 1337, 1337), proc('pilot-agent', 1337, 1337), proc('batch', 1338, 1000), proc('app', 1000, 1000)];
    expect(await findings(argv, PROXY, procs)).toEqual(['MCP020 5338']);
  });

  it('in ambient, leaves ztunnel its ports and asks for all three of them', async () => {
    const ztunnel = [listen('0.0.0.0', 15001, 0), listen('0.0.0.0', 15006, 0)];
    expect(await findings(['ambient'], ztunnel, [], undefined, AMBIENT_ROUTING)).toEqual(['MCP040']);
    expect(await findings(['ambient'], [...ztunnel, listen('0.0.0.0', 15008, 0)], [], undefined, AMBIENT_ROUTING)).toEqual([]);
    expect(await findings(['ambient'], [...ztunnel, listen('0.0.0.0', 15008, 0)])).toEqual(['MCP030']);
  });

  it('follows the kernel through PREROUTING: a foreign RETURN ahead of the capture jump exempts its port', async () => {
    const ahead = (rule: string) => (text: string) => text.replace('-A PREROUTING -p tcp -j ISTIO_INBOUND', `${rule}\n-A PREROUTING -p tcp -j ISTIO_INBOUND`);
    const lo9000 = [...PROXY, listen('127.0.0.1', 9000), listen('0.0.0.0', 9001)];
    expect(await findings(ISTIO_INIT_ARGS, lo9000)).toEqual(['MCP010 9000']);
    expect(await findings(ISTIO_INIT_ARGS, lo9000, [], undefined, NO_ROUTING, ahead('-A PREROUTING -p tcp -m tcp --dport 9001 -j RETURN'))).toEqual(['MCP003', 'MCP010 9000', 'MCP013 9001']);
    // A rule trace cannot evaluate on the way: neither captured nor excluded, so neither finding.
    expect(await findings(ISTIO_INIT_ARGS, lo9000, [], undefined, NO_ROUTING, ahead('-A PREROUTING -p tcp -m addrtype --dst-type LOCAL -j RETURN'))).toEqual(['MCP003']);
  });

  it('reports a TPROXY mark without its ip rule', async () => {
    expect(await findings(withArgs({ '-m': 'TPROXY' }), PROXY)).toEqual(['MCP030', 'MCP031']);
  });
});

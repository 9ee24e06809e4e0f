import { describe, expect, it } from 'vitest';
import { requireRoot } from '../helpers/netns.js';
import { ADDR } from '../helpers/topology.js';
import { SENDERS, makeRng, randomFlows, type Sender, type TraceConfig, type TraceFlowCase } from './trace-configs.js';
import { applyConfig } from './trace-harness.js';
import { runTraceRound } from './trace-round.js';

requireRoot();

/**
 * iptables rules and a native nft table in one namespace: the kernel runs both on each hook in priority order,
 * and so must the walk. The native table (not meshcap's) accepts 443 early (which ends only its own chain, so
 * iptables' nat still redirects it), redirects the app's 3306 in a nat chain before iptables' nat (whose
 * chain is then skipped: the binding is made), and drops 9000 to one address after filter.
 */
const CFG: TraceConfig = { title: 'sidecar REDIRECT (legacy) + a native table', args: ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-b', '*', '--ipv6', 'off'], ipv6: false, ambient: false };

const NATIVE = `table inet mixed-probe {
  chain early { type filter hook output priority -200; policy accept; tcp dport 443 counter accept; }
  chain natfirst { type nat hook output priority -110; policy accept; meta skuid 1000 tcp dport 3306 counter redirect to :15006; }
  chain late { type filter hook output priority 10; policy accept; ip daddr ${ADDR.remoteV4} tcp dport 9000 counter drop; }
}
`;

const app = SENDERS.app as Sender;
const proxy = SENDERS.proxy as Sender;
const outbound = (sender: Sender, dport: number): TraceFlowCase => ({ direction: 'outbound', family: 'ipv4', sender, dst: ADDR.remoteV4, dport, local: false });

describe('trace of a namespace holding iptables rules and a native nft table', () => {
  it('walks both in the kernel priority order and predicts every landing', async () => {
    const chosen = [outbound(app, 443), outbound(app, 3306), outbound(proxy, 3306), outbound(app, 9000), outbound(proxy, 9000), outbound(app, 80)];
    const flows = [...chosen, ...randomFlows(makeRng(7), CFG, 24)];
    const { rows, live } = await runTraceRound({
      flows,
      apply: async (t) => {
        await applyConfig(t, CFG, 'legacy');
        await t.pod.run('nft', ['-f', '-'], { input: NATIVE });
      },
      processFlows: 1,
    });
    expect(rows.filter((r) => !r.ok)).toEqual([]);
    const [at443, app3306, proxy3306, app9000] = live;
    expect(at443).toMatchObject({ verdict: 'redirect', port: 15001 });
    expect(at443?.path.map((s) => s.table)).toEqual(['inet mixed-probe', 'nat', 'nat', 'nat']);
    expect(app3306).toMatchObject({ verdict: 'redirect', port: 15006 });
    expect(app3306?.path.some((s) => s.table === 'nat' && s.chain === 'OUTPUT')).toBe(false);
    expect(proxy3306).toMatchObject({ verdict: 'pass' });
    expect(app9000).toMatchObject({ verdict: 'redirect', port: 15001 });
    expect(live[4]).toMatchObject({ verdict: 'drop' });
  });
});

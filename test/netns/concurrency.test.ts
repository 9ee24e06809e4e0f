import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { meshcapIn, saveOf } from '../helpers/meshcap.js';
import { netnsPool, requireRoot, saveTables, splitDryRunFamilies } from '../helpers/netns.js';
import { entryCommand } from '../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';

requireRoot();

/**
 * Concurrency on one node: many CNI ADDs at once (one per pod namespace, all sharing the node's namespace for
 * the probe ipset), and many meshcap runs at once on one namespace. Everything must succeed and every
 * namespace must hold exactly its rules — no duplicate jumps, no lost set members.
 */
const PODS = 50;

describe('concurrency', () => {
  const pool = netnsPool();
  afterEach(pool.removeAll);
  const netns = pool.make;

  it(`${PODS} CNI ADDs at once (sidecar) all succeed, each namespace with exactly its rules`, { timeout: 180_000 }, async () => {
    const pods = await Promise.all(Array.from({ length: PODS }, () => netns('mccc')));
    const { file, args } = entryCommand('meshcap-cni');
    const conf = { cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', ipv6: 'off', force_iptables_binary: 'nft' };
    const results = await Promise.all(
      pods.map((pod, i) =>
        execa(file, args, {
          reject: false,
          input: JSON.stringify({ ...conf, prevResult: { cniVersion: '1.0.0', ips: [{ address: `198.51.100.${i + 2}/24` }] } }),
          env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: `pod${i}`, CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni', CNI_ARGS: '' },
        }),
      ),
    );
    for (const r of results) expect({ code: r.exitCode, out: r.stdout.slice(0, 200) }).toMatchObject({ code: 0 });
    const dry = await runCli(['-n', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15020,15021,15090', '-o', '15020', '--ipv6', 'off']);
    const expected = saveTables(splitDryRunFamilies(dry.stdout).ipv4);
    for (const pod of pods) expect(saveTables(await saveOf(pod, 'ipv4', 'nft'))).toEqual(expected);
  });

  it(`${PODS} ambient ADDs at once keep the node's probe ipset and SNAT chain exact`, { timeout: 180_000 }, async () => {
    const node = await netns('mcnode');
    const pods = await Promise.all(Array.from({ length: PODS }, () => netns('mcca')));
    const { file, args } = entryCommand('meshcap-cni');
    const conf = { cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', mode: 'ambient', inbound: 'redirect', ipv6: 'off', probe_ipset: true, force_iptables_binary: 'nft' };
    const results = await Promise.all(
      pods.map((pod, i) =>
        // The plugin runs in the node's namespace (here: ours, made for the test), as a runtime would run it.
        execa('ip', ['netns', 'exec', node.name, file, ...args], {
          reject: false,
          input: JSON.stringify({ ...conf, prevResult: { cniVersion: '1.0.0', ips: [{ address: `198.51.100.${i + 2}/24` }] } }),
          env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: `amb${i}`, CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni', CNI_ARGS: `K8S_POD_NAMESPACE=default;K8S_POD_NAME=amb${i}` },
        }),
      ),
    );
    for (const r of results) expect({ code: r.exitCode, err: r.exitCode === 0 ? '' : r.stdout }).toEqual({ code: 0, err: '' });
    const members = (await node.run('ipset', ['list', 'istio-inpod-probes-v4'])).stdout.split('\n').filter((l) => l.startsWith('198.51.100.'));
    expect(members).toHaveLength(PODS);
    const nat = await saveOf(node, 'ipv4', 'nft');
    expect(nat.match(/-A POSTROUTING -j ISTIO_POSTRT/g)).toHaveLength(1);
    expect(nat.match(/-A ISTIO_POSTRT /g)).toHaveLength(1);
    for (const pod of pods.slice(0, 5)) expect(await saveOf(pod, 'ipv4', 'nft')).toContain('-A ISTIO_PRERT');
  });

  it('10 meshcap runs at once on one namespace end in exactly the rule set, applied once', { timeout: 120_000 }, async () => {
    const pod = await netns('mc10');
    const results = await Promise.all(Array.from({ length: 10 }, () => meshcapIn(pod, [...ISTIO_INIT_ARGS, '--ipv6', 'on'])));
    for (const r of results) expect(r.exitCode).toBe(0);
    expect(results.filter((r) => r.stderr.includes('"action":"applied"'))).toHaveLength(1);
    const dry = splitDryRunFamilies((await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'on'])).stdout);
    expect(saveTables(await saveOf(pod, 'ipv4', 'nft'))).toEqual(saveTables(dry.ipv4));
    expect(saveTables(await saveOf(pod, 'ipv6', 'nft'))).toEqual(saveTables(dry.ipv6));
  });
});

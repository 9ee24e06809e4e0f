import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { meshcapIn } from '../helpers/meshcap.js';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { nftListing } from '../helpers/nft.js';

requireRoot();

/**
 * `--verify` on native nftables state: exit 0 when our tables and routing are exactly what the config
 * installs, 1 with each difference named otherwise; it never changes the namespace.
 */
const NFT_TPROXY = ['--native-nftables', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'TPROXY', '-b', '*', '-i', '*', '--ipv6', 'off'];
const NFT_REDIRECT = ['--native-nftables', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-b', '8080', '-i', '*', '--ipv6', 'off'];

describe('--verify with --native-nftables', () => {
  let ns: Netns | undefined;
  beforeEach(async () => {
    ns = await createNetns('mcnftv');
    await ns.run('ip', ['link', 'set', 'lo', 'up']);
  });
  afterEach(async () => {
    await deleteNetns(ns);
  });

  async function verify(args: readonly string[]) {
    const before = await nftListing(ns!);
    const r = await meshcapIn(ns!, [...args, '--verify']);
    expect(await nftListing(ns!)).toBe(before);
    return r;
  }

  it('exits 1 naming every table in an empty namespace, 0 once the config is applied', async () => {
    const empty = await verify(NFT_TPROXY);
    expect(empty.exitCode).toBe(1);
    expect(empty.stdout).toContain('missing table: inet istio-proxy-nat');
    expect(empty.stdout).toContain('missing table: inet istio-proxy-mangle');
    expect(empty.stdout).toMatch(/missing route: local 0\.0\.0\.0\/0 dev lo table 133/);
    expect((await meshcapIn(ns!, NFT_TPROXY)).exitCode).toBe(0);
    const held = await verify(NFT_TPROXY);
    expect(held.stderr).not.toContain('"level":50');
    expect(held.exitCode).toBe(0);
    expect(held.stdout).toBe('');
  });

  it('names a foreign statement in our chain, a deleted table and a deleted ip rule', async () => {
    expect((await meshcapIn(ns!, NFT_TPROXY)).exitCode).toBe(0);
    await ns!.run('nft', ['add', 'rule', 'inet', 'istio-proxy-nat', 'istio-output', 'ip', 'daddr', '192.0.2.9', 'counter', 'accept']);
    await ns!.run('nft', ['delete', 'table', 'inet', 'istio-proxy-mangle']);
    await ns!.run('ip', ['-4', 'rule', 'del', 'fwmark', '1337', 'lookup', '133']);
    const r = await verify(NFT_TPROXY);
    expect(r.exitCode).toBe(1);
    expect(r.stdout.split('\n')).toEqual(
      expect.arrayContaining([
        'missing table: inet istio-proxy-mangle',
        'unexpected: chain istio-output: ip daddr 192.0.2.9 counter accept (inet istio-proxy-nat)',
        'missing ip rule: fwmark 0x539 lookup 133 (ipv4)',
      ]),
    );
  });

  it('reports the tables another config has and this one does not, and ignores foreign tables', async () => {
    expect((await meshcapIn(ns!, NFT_TPROXY)).exitCode).toBe(0);
    await ns!.run('nft', ['add', 'table', 'inet', 'foreign']);
    const r = await verify(NFT_REDIRECT);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain('unexpected table: inet istio-proxy-mangle');
    expect(r.stdout).not.toContain('foreign');
  });

  it('names native tables next to iptables rules from either side, and the iptables config alone holds once they go', async () => {
    const IPTABLES = NFT_REDIRECT.filter((a) => a !== '--native-nftables');
    expect((await meshcapIn(ns!, IPTABLES)).exitCode).toBe(0);
    expect((await meshcapIn(ns!, NFT_REDIRECT)).exitCode).toBe(0);
    const fromIptables = await verify(IPTABLES);
    expect(fromIptables.exitCode).toBe(1);
    expect(fromIptables.stdout).toBe('unexpected table: inet istio-proxy-nat (native nftables, next to the iptables rules)');
    const fromNft = await verify(NFT_REDIRECT);
    expect(fromNft.exitCode).toBe(1);
    expect(fromNft.stdout).toMatch(/^unexpected: ip nat ISTIO_\w+ \(iptables, next to the native tables\)$/m);
    expect((await meshcapIn(ns!, [...NFT_REDIRECT, '--cleanup-only'])).exitCode).toBe(0);
    expect((await verify(IPTABLES)).exitCode).toBe(0);
  });

  it('prints the comparison as JSON with --json', async () => {
    expect((await meshcapIn(ns!, NFT_REDIRECT)).exitCode).toBe(0);
    const r = await verify([...NFT_REDIRECT, '--json']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ equal: true, missing: [], unexpected: [] });
  });
});

import { describe, expect, it } from 'vitest';
import { addressScope, parseProcNet } from '../../../src/inspect/listeners.js';
import { mapIdInward, parseStatusIds } from '../../../src/inspect/processes.js';
import { parseNftJson } from '../../../src/inspect/nft-json.js';

const parseNftTables = (json: string) => parseNftJson(json).tables.map(({ family, name }) => ({ family, name }));
import { parseAddresses } from '../../../src/inspect/routing.js';

/** The read side's small parsers, on kernel and tool output as Linux 6.x, iproute2 and nftables 1.0 print it. */
const TCP_HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const UDP_HEADER = '   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops';
const PROC_NET = [
  TCP_HEADER,
  '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 41001 1 0000000000000000 100 0 0 10 0',
  '   1: 00000000:3A99 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1337        0 41002 1 0000000000000000 100 0 0 10 0',
  '   2: 0264330A:1F90 0164330A:C350 01 00000000:00000000 00:00000000 00000000  1000        0 41003 1 0000000000000000 20 4 30 10 -1',
  TCP_HEADER,
  '   0: 00000000000000000000000001000000:2382 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 41004 1 0000000000000000 100 0 0 10 0',
  '   1: 00000000000000000000000000000000:3A99 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1337        0 41005 1 0000000000000000 100 0 0 10 0',
  UDP_HEADER,
  '  100: 0100007F:3ACD 00000000:0000 07 00000000:00000000 00:00000000 00000000  1337        0 41006 2 0000000000000000 0',
  UDP_HEADER,
].join('\n');

describe('parseProcNet', () => {
  it('keeps TCP listeners and bound UDP sockets with address, port, owner and inode', () => {
    expect(parseProcNet(PROC_NET)).toEqual([
      { protocol: 'tcp', family: 'ipv4', address: '127.0.0.1', port: 8080, uid: 1000, inode: 41001 },
      { protocol: 'tcp', family: 'ipv4', address: '0.0.0.0', port: 15001, uid: 1337, inode: 41002 },
      { protocol: 'tcp', family: 'ipv6', address: '::1', port: 9090, uid: 1000, inode: 41004 },
      { protocol: 'tcp', family: 'ipv6', address: '::', port: 15001, uid: 1337, inode: 41005 },
      { protocol: 'udp', family: 'ipv4', address: '127.0.0.1', port: 15053, uid: 1337, inode: 41006 },
    ]);
  });

  it('skips lines it cannot read', () => {
    expect(parseProcNet(`${TCP_HEADER}\n   0: ZZ:1F90 00000000:0000 0A x x x 1000 0 1\n garbage\n`)).toEqual([]);
  });

  it.each([
    ['127.0.0.1', 'loopback'], ['127.0.0.6', 'loopback'], ['::1', 'loopback'], ['::ffff:127.0.0.1', 'loopback'],
    ['0.0.0.0', 'wildcard'], ['::', 'wildcard'], ['198.51.100.2', 'specific'], ['2001:db8::1', 'specific'],
  ])('%s reaches %s', (address, scope) => {
    expect(addressScope(address)).toBe(scope);
  });
});

describe('mapIdInward', () => {
  it("turns the node's view of a hostUsers: false pod's id into the pod's own", () => {
    const map = '         0     200000      65536\n';
    expect(mapIdInward(201337, map)).toBe(1337);
    expect(mapIdInward(200000, map)).toBe(0);
    expect(mapIdInward(265536, map)).toBe(265536);
  });

  it('leaves ids of the initial user namespace as they are', () => {
    expect(mapIdInward(1337, '         0          0 4294967295\n')).toBe(1337);
    expect(mapIdInward(1337, '')).toBe(1337);
  });
});

describe('parseStatusIds', () => {
  it('reads the real and fs ids of /proc/<pid>/status', () => {
    const status = 'Name:\tenvoy\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1337\t1337\t1337\t1338\nGid:\t0\t0\t0\t1337\nFDSize:\t64\n';
    expect(parseStatusIds(status)).toEqual({ uid: 1337, fsuid: 1338, gid: 0, fsgid: 1337 });
  });

  it('answers undefined for a status without ids', () => {
    expect(parseStatusIds('Name:\tx\n')).toBeUndefined();
  });
});

describe('the tables of nft -j list ruleset (parseNftJson)', () => {
  it('lists the tables of nft -j list ruleset', () => {
    const json = JSON.stringify({ nftables: [{ metainfo: { version: '1.0.6', json_schema_version: 1 } }, { table: { family: 'ip', name: 'nat', handle: 1 } }, { chain: { family: 'ip', table: 'nat', name: 'OUTPUT' } }, { table: { family: 'inet', name: 'istio-proxy-nat', handle: 2 } }] });
    expect(parseNftTables(json)).toEqual([{ family: 'ip', name: 'nat' }, { family: 'inet', name: 'istio-proxy-nat' }]);
  });

  it.each(['', 'not json', '{"nftables": 3}', '[]'])('reads %j as no tables', (text) => {
    expect(parseNftTables(text)).toEqual([]);
  });
});

describe('parseAddresses', () => {
  it('lists every address with its interface, family and scope', () => {
    const json = JSON.stringify([
      { ifname: 'lo', addr_info: [{ family: 'inet', local: '127.0.0.1', scope: 'host' }, { family: 'inet6', local: '::1', scope: 'host' }] },
      { ifname: 'eth0', addr_info: [{ family: 'inet', local: '198.51.100.2', scope: 'global' }, { family: 'inet6', local: '2001:db8:1::2', scope: 'global' }, { family: 'inet6', local: 'fe80::1', scope: 'link' }] },
    ]);
    expect(parseAddresses(json).filter((a) => a.ifname === 'eth0')).toEqual([
      { ifname: 'eth0', family: 'ipv4', address: '198.51.100.2', scope: 'global' },
      { ifname: 'eth0', family: 'ipv6', address: '2001:db8:1::2', scope: 'global' },
      { ifname: 'eth0', family: 'ipv6', address: 'fe80::1', scope: 'link' },
    ]);
  });
});

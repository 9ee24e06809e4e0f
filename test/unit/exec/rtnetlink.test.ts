import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CommandError, ExitCode, NetlinkError } from '../../../src/errors.js';
import type { Plan } from '../../../src/model/plan.js';
import type { Family } from '../../../src/model/rule.js';
import { applyRouting, missingRouting, removeRouting } from '../../../src/exec/routes.js';
import { ipBatchAccess } from '../../../src/exec/routes-ip.js';
import { describeChange, type RoutingChange } from '../../../src/exec/routes-model.js';
import { encodeChange, netlinkAccess } from '../../../src/exec/routes-netlink.js';
import { readReply, splitMessages } from '../../../src/inspect/netlink.js';
import { encodeDump, encodeGetLink, RTM } from '../../../src/exec/rtnetlink.js';
import type { Runner } from '../../../src/exec/runner.js';
import { ok, scripted } from '../../helpers/scripted-runner.js';

/** Captured from the kernel and iproute2 by test/fixtures/rtnetlink/capture.py (its header says how). */
interface Captured {
  readonly requests: Record<string, string>;
  readonly dumps: Record<string, string[]>;
  readonly ip_json: Record<Family, string>;
  readonly ip_reads: Record<Family, string[]>;
}
const CAPTURED = JSON.parse(readFileSync(new URL('../../fixtures/rtnetlink/captured.json', import.meta.url), 'utf8')) as Captured;

const messagesOf = (key: string) => (CAPTURED.dumps[key] ?? []).flatMap((h) => splitMessages(Buffer.from(h, 'hex')));

const rule = (family: Family, mark: number, table: number, extra: { mask?: number; priority?: number } = {}) => ({ family, mark, table, ...extra });
const CHANGES: [Family, RoutingChange][] = (['ipv4', 'ipv6'] as const).flatMap((f): [Family, RoutingChange][] => [
  [f, { kind: 'rule', op: 'add', rule: rule(f, 0x539, 133) }],
  [f, { kind: 'rule', op: 'add', rule: rule(f, 0x539, 1000, { mask: 0xfff, priority: 32764 }) }],
  [f, { kind: 'route', op: 'replace', route: { family: f, table: 133 } }],
  [f, { kind: 'route', op: 'replace', route: { family: f, table: 1000 } }],
  [f, { kind: 'rule', op: 'del', rule: rule(f, 0x539, 133) }],
  [f, { kind: 'rule', op: 'del', rule: rule(f, 0x539, 1000, { mask: 0xfff, priority: 32764 }) }],
  [f, { kind: 'route', op: 'del', route: { family: f, table: 133 } }],
  [f, { kind: 'route', op: 'del', route: { family: f, table: 1000 } }],
  ...(f === 'ipv6' ? ['::6/128'] : ['127.0.0.6/8', '203.0.113.6/32']).flatMap((cidr): [Family, RoutingChange][] => [
    [f, { kind: 'address', op: 'replace', address: { family: f, cidr, device: 'lo' } }],
    [f, { kind: 'address', op: 'del', address: { family: f, cidr, device: 'lo' } }],
  ]),
]);

describe('rtnetlink requests', () => {
  it.each(CHANGES.map(([f, c]) => [`${describeChange(f, c)} (${f})`, f, c] as const))('%s: the bytes iproute2 sends for the same batch line', (line, family, change) => {
    const want = CAPTURED.requests[line];
    expect(want, `captured.json has ${line}`).toBeDefined();
    expect(encodeChange(family, change, (d) => (d === 'lo' ? 1 : Number.NaN)).toString('hex')).toBe(want);
  });

  it('covers every request the capture holds', () => {
    expect(CHANGES.map(([f, c]) => `${describeChange(f, c)} (${f})`).sort()).toEqual(Object.keys(CAPTURED.requests).sort());
  });

  it('asks for a link by name with an ack, and dumps without one (each reply then ends in an ack, error or done)', () => {
    const flags = (b: Buffer) => b.readUInt16LE(6);
    expect(flags(encodeGetLink('lo')) & 0x4).toBe(0x4);
    for (const what of ['rules', 'routes', 'addresses'] as const) expect(flags(encodeDump(what, 'ipv6'))).toBe(0x301);
    expect(encodeDump('rules', 'ipv6').readUInt16LE(4)).toBe(RTM.GETRULE);
  });
});

/** A runner whose rtnetlink answers from the captured dumps and acks every change, recording what it was sent. */
function capturedKernel(refuse?: (request: Buffer) => string | undefined): Runner & { sent: Buffer[] } {
  const sent: Buffer[] = [];
  const fam = (b: Buffer): Family => (b.readUInt8(16) === 10 ? 'ipv6' : 'ipv4');
  const ack = (errorHex?: string) => {
    if (errorHex !== undefined) return splitMessages(Buffer.from(errorHex, 'hex'));
    const b = Buffer.alloc(36);
    b.writeUInt32LE(36, 0);
    b.writeUInt16LE(2, 4);
    return [b];
  };
  return {
    sent,
    run: async () => ({ exitCode: 127, stdout: '', stderr: 'ip: not expected' }),
    async rtnetlink(requests) {
      const replies: Buffer[][] = [];
      for (const r of requests) {
        sent.push(r);
        const type = r.readUInt16LE(4);
        const refusal = refuse?.(r);
        const reply =
          type === RTM.GETLINK ? messagesOf('link lo') : type === RTM.GETRULE ? messagesOf(`rules ${fam(r)}`) : type === RTM.GETROUTE ? messagesOf(`routes ${fam(r)}`) : type === RTM.GETADDR ? messagesOf(`addresses ${fam(r)}`) : ack(refusal);
        replies.push(reply);
        if (readReply(reply).errno !== 0) break;
      }
      return replies;
    },
  };
}

describe('reading the kernel by rtnetlink and by `ip -j`', () => {
  it.each(['ipv4', 'ipv6'] as const)('the captured dumps (%s) read as the same routing as `ip -j -batch` of the same namespace', async (family) => {
    const tables = [133, 1000, 134];
    expect(CAPTURED.ip_reads[family]).toEqual(['rule show', ...tables.map((t) => `route show table ${t}`), 'address show dev lo']);
    const ip = ipBatchAccess(scripted({ [`ip -${family.at(-1)} -j -batch -`]: ok(CAPTURED.ip_json[family]) }));
    const byIp = await ip.read(family, tables);
    const byNetlink = await netlinkAccess(capturedKernel(), ip).read(family, tables);
    expect(byNetlink).toEqual(byIp);
    // What the namespace holds (capture.py's STATE): our rules (IPv4's twice), a foreign one, local defaults on lo only.
    const ours = byNetlink.rules.filter((r) => r.fwmark === 0x539);
    expect(ours).toEqual(family === 'ipv4' ? [{ table: 133, priority: 32764, fwmark: 0x539 }, { table: 1000, priority: 32764, fwmark: 0x539, fwmask: 0xfff }, { table: 133, priority: 32765, fwmark: 0x539 }] : [{ table: 1000, priority: 32764, fwmark: 0x539, fwmask: 0xfff }, { table: 133, priority: 32765, fwmark: 0x539 }]);
    expect([...byNetlink.localDefault].sort()).toEqual(family === 'ipv4' ? [1000, 133] : [133]);
    expect(byNetlink.loAddresses.size).toBe(family === 'ipv4' ? 1 : 2);
  });

  it("reads the kernel's refusals: the errno, and the reason an extended ack gives", () => {
    expect(readReply(messagesOf('error rule add exists'))).toEqual({ data: [], errno: 17 });
    expect(readReply(messagesOf('error route via a link that is down'))).toEqual({ data: [], errno: 100, reason: 'Nexthop device is not up' });
    expect(readReply(messagesOf('link lo')).errno).toBe(0);
    expect(() => splitMessages(Buffer.from('ff000000020000000000000000000000', 'hex'))).toThrow(/malformed netlink reply/);
  });
});

const TPROXY: Plan = {
  families: ['ipv4', 'ipv6'],
  rules: [],
  ipRules: [rule('ipv4', 0x539, 133), rule('ipv6', 0x539, 133)],
  routes: [{ family: 'ipv4', table: 133 }, { family: 'ipv6', table: 133 }],
  addresses: [{ family: 'ipv6', cidr: '::6/128', device: 'lo' }],
  ipsets: [],
};

const written = (k: { sent: Buffer[] }) => k.sent.filter((b) => ![RTM.GETLINK, RTM.GETRULE, RTM.GETROUTE, RTM.GETADDR].includes(b.readUInt16LE(4) as 18)).map((b) => b.toString('hex'));
const req = (line: string) => CAPTURED.requests[line] ?? `no capture of ${line}`;

describe('routing decided over rtnetlink', () => {
  it('adds no rule the namespace has, replaces the routes and ::6 — the requests ip would send, no process', async () => {
    const k = capturedKernel();
    await applyRouting(k, TPROXY);
    expect(written(k)).toEqual([req('route replace local 0.0.0.0/0 dev lo table 133 (ipv4)'), req('route replace local ::/0 dev lo table 133 (ipv6)'), req('address replace ::6/128 dev lo (ipv6)')]);
  });

  it('removes every duplicate of our rules, our local routes and ::6, and nothing foreign', async () => {
    const k = capturedKernel();
    await removeRouting(k, TPROXY);
    const del4 = req('rule del fwmark 0x539 lookup 133 (ipv4)');
    expect(written(k)).toEqual([del4, del4, req('route del local 0.0.0.0/0 dev lo table 133 (ipv4)'), req('rule del fwmark 0x539 lookup 133 (ipv6)'), req('route del local ::/0 dev lo table 133 (ipv6)'), req('address del ::6/128 dev lo (ipv6)')]);
  });

  it('reports what the namespace lacks, as the ip path words it', async () => {
    const plan: Plan = { ...TPROXY, ipRules: [rule('ipv4', 0x539, 1000, { mask: 0xfff, priority: 32764 }), rule('ipv6', 0x539, 134)], routes: [{ family: 'ipv4', table: 134 }, { family: 'ipv6', table: 1000 }] };
    expect(await missingRouting(capturedKernel(), plan)).toEqual([
      { kind: 'route', text: 'local 0.0.0.0/0 dev lo table 134' },
      { kind: 'ip rule', text: 'fwmark 0x539 lookup 134 (ipv6)' },
      { kind: 'route', text: 'local ::/0 dev lo table 1000' },
    ]);
  });

  it("fails as a command would (exit 4), naming the request and the kernel's reason, and sends nothing after it", async () => {
    const down = CAPTURED.dumps['error route via a link that is down']?.[0];
    const k = capturedKernel((r) => (r.readUInt16LE(4) === RTM.NEWROUTE && r.readUInt8(16) === 10 ? down : undefined));
    const err = await applyRouting(k, TPROXY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetlinkError);
    expect(err).toBeInstanceOf(CommandError);
    expect((err as NetlinkError).exitCode).toBe(ExitCode.command);
    expect((err as Error).message).toBe('rtnetlink RTM_NEWROUTE local ::/0 dev lo table 133 (ipv6) failed: Network is down (Nexthop device is not up) (hint: bring lo up in the namespace)');
    expect(written(k).at(-1)).toBe(req('route replace local ::/0 dev lo table 133 (ipv6)'));
  });

  it('names a refused rule by its selector and the errno text', async () => {
    const exists = CAPTURED.dumps['error rule add exists']?.[0];
    const plan: Plan = { ...TPROXY, families: ['ipv4'], ipRules: [rule('ipv4', 0x539, 133, { mask: 0xfff })], routes: [], addresses: [] };
    const err = await applyRouting(capturedKernel(() => exists), plan).catch((e: unknown) => e);
    expect((err as Error).message).toBe('rtnetlink RTM_NEWRULE fwmark 0x539/0xfff lookup 133 (ipv4) failed: File exists');
  });

  it('goes through `ip -batch` when the runner cannot make the exchange (no native calls), with the same lines as before', async () => {
    const runner = { ...scripted({ 'ip -4 -j -batch -': ok('[]\n'), 'ip -6 -j -batch -': ok('[]\n'), ip: ok() }), rtnetlink: async () => undefined };
    await applyRouting(runner, TPROXY);
    expect(runner.calls).toEqual(['ip -4 -j -batch -', 'ip -4 -batch -', 'ip -6 -j -batch -', 'ip -6 -batch -']);
    expect(runner.inputs[1]).toBe('rule add fwmark 0x539 lookup 133\nroute replace local 0.0.0.0/0 dev lo table 133\n');
    expect(runner.inputs[3]).toBe('rule add fwmark 0x539 lookup 133\nroute replace local ::/0 dev lo table 133\naddress replace ::6/128 dev lo\n');
  });
});

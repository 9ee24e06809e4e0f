import { NetlinkError } from '../errors.js';
import { parseHostAddress } from '../model/cidr.js';
import type { Family } from '../model/rule.js';
import { addressKey, ALL, describeChange, NO_MASK, ruleSelector, type RoutingAccess, type RoutingChange, type SeenRouting } from './routes-model.js';
import { ENETDOWN, encodeAddress, encodeDump, encodeGetLink, encodeLocalRoute, encodeRule, errnoText, parseAddress, parseLinkIndex, parseRoute, parseRule, requestName } from './rtnetlink.js';
import { readReply, type Reply } from '../inspect/netlink.js';
import type { Runner } from './runner.js';

/**
 * Routing by rtnetlink, in-process (the runner's `rtnetlink`, src/exec/native.ts): per family one exchange
 * to look (lo's index, the rules, routes and addresses dumps) and one to change, with exactly the requests
 * `ip` sends for the same batch lines (src/exec/rtnetlink.ts). Where the runner cannot make the exchange
 * (no native calls, a namespace it cannot enter) nothing was sent, and that call goes through `ip` instead.
 */

type Exchange = NonNullable<Runner['rtnetlink']>;

const LO = 'lo';
const hintFor = (r: Reply) => (r.errno === ENETDOWN || /not up/.test(r.reason ?? '') ? 'bring lo up in the namespace' : undefined);

/** Sends the requests; the first refusal is a NetlinkError naming it; undefined when they could not be sent. */
async function exchange(rtnetlink: Exchange, requests: readonly Buffer[], names: readonly string[], family: Family): Promise<Reply[] | undefined> {
  const raw = await rtnetlink(requests);
  if (raw === undefined) return undefined;
  const replies = raw.map(readReply);
  const failed = replies.findIndex((r) => r.errno !== 0);
  if (failed >= 0) {
    const r = replies[failed] as Reply;
    const request = requests[failed] as Buffer;
    const reason = r.reason === undefined ? errnoText(r.errno) : `${errnoText(r.errno)} (${r.reason})`;
    throw new NetlinkError({ operation: `rtnetlink ${requestName(request)} ${names[failed] ?? ''} (${family})`, errno: r.errno, reason, hint: hintFor(r) });
  }
  if (replies.length !== requests.length) throw new Error(`rtnetlink: ${replies.length} replies to ${requests.length} requests`);
  return replies;
}

const linkIndex = (r: Reply | undefined) => {
  const msg = r?.data[0];
  if (msg === undefined) throw new Error('rtnetlink: RTM_GETLINK answered without the link');
  return parseLinkIndex(msg);
};

/** The view both readers share: a mask of all ones is no mask (the kernel stores one for every fwmark rule; `ip` omits it). */
async function read(rtnetlink: Exchange, family: Family): Promise<SeenRouting | undefined> {
  const replies = await exchange(rtnetlink, [encodeGetLink(LO), encodeDump('rules', family), encodeDump('routes', family), encodeDump('addresses', family)], [LO, 'dump', 'dump', 'dump'], family);
  if (replies === undefined) return undefined;
  const [link, rules, routes, addresses] = replies;
  const lo = linkIndex(link);
  const localDefault = new Set((routes?.data ?? []).map(parseRoute).filter((r) => r.local && r.dstLen === 0 && r.oif === lo).map((r) => r.table));
  const onLo = (addresses?.data ?? []).map(parseAddress).filter((a) => a.index === lo);
  return { rules: (rules?.data ?? []).map(parseRule).map(({ fwmask, ...r }) => (fwmask === undefined || fwmask === NO_MASK ? r : { ...r, fwmask })), localDefault, loAddresses: new Set(onLo.map((a) => addressKey(formatAddress(a.bytes), a.prefix))) };
}

/** Bytes in the form parseHostAddress reads (addressKey turns both readers' spellings into the same key). */
function formatAddress(bytes: readonly number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i + 1 < bytes.length; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/** The request for one change; `index` names a link by its index. */
export function encodeChange(family: Family, c: RoutingChange, index: (device: string) => number): Buffer {
  if (c.kind === 'rule') return encodeRule(c.op, c.rule);
  if (c.kind === 'route') return encodeLocalRoute(c.op, { family, table: c.route.table, oif: index(LO) });
  const [addr = '', len = ''] = c.address.cidr.split('/');
  const parsed = parseHostAddress(addr);
  if (!parsed.ok) throw new Error(`rtnetlink: ${c.address.cidr} is not an address`);
  return encodeAddress(c.op, { family, bytes: parsed.value.bytes, prefix: Number(len), index: index(c.address.device) });
}

/** What a change is called in errors: the request, then what `ip` would have been told. */
function changeName(family: Family, c: RoutingChange): string {
  if (c.kind === 'rule') return ruleSelector(c.rule);
  if (c.kind === 'route') return `local ${ALL[family]} dev lo table ${c.route.table}`;
  return describeChange(family, c).replace(/^address \w+ /, '');
}

async function change(rtnetlink: Exchange, family: Family, changes: readonly RoutingChange[]): Promise<boolean> {
  const devices = [...new Set([LO, ...changes.flatMap((c) => (c.kind === 'address' ? [c.address.device] : []))])];
  const links = await exchange(rtnetlink, devices.map(encodeGetLink), devices, family);
  if (links === undefined) return false;
  const indexes = new Map(devices.map((d, i) => [d, linkIndex(links[i])]));
  const index = (device: string) => indexes.get(device) ?? Number.NaN;
  const done = await exchange(rtnetlink, changes.map((c) => encodeChange(family, c, index)), changes.map((c) => changeName(family, c)), family);
  return done !== undefined;
}

/** Reads and changes routing by rtnetlink; `ip` (the fallback access) for any call the runner cannot make. */
export function netlinkAccess(runner: Runner, fallback: RoutingAccess): RoutingAccess {
  const rtnetlink = runner.rtnetlink?.bind(runner);
  if (rtnetlink === undefined) return fallback;
  return {
    read: async (family, tables) => (await read(rtnetlink, family)) ?? fallback.read(family, tables),
    async change(family, changes) {
      if (!(await change(rtnetlink, family, changes))) await fallback.change(family, changes);
    },
  };
}

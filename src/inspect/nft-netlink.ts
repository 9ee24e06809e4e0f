/**
 * The one nf_tables netlink exchange meshcap makes itself: a dump of the namespace's tables (NFT_MSG_GETTABLE),
 * what `nft list tables` asks the kernel, to tell a fresh pod from one with rules without starting a process.
 * Pure: the request's bytes and the reply's parse (linux/netlink.h, linux/netfilter/nfnetlink.h,
 * linux/netfilter/nf_tables.h); src/exec/native.ts does the socket I/O.
 */
import { attributes, cString, HEADER, messageType, NLMSG_DONE, NLMSG_ERROR, splitMessages } from './netlink.js';

const NFNL_SUBSYS_NFTABLES = 10;
const NFT_MSG_NEWTABLE = 0;
const NFT_MSG_GETTABLE = 1;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const NFTA_TABLE_NAME = 1;
const NFGEN = 4;

/** nf_tables families by their NFPROTO_* number, as nft names them. */
const FAMILIES: Readonly<Record<number, string>> = { 1: 'inet', 2: 'ip', 3: 'arp', 5: 'netdev', 7: 'bridge', 10: 'ip6' };

export interface NftTableName {
  readonly family: string;
  readonly name: string;
}

/** The dump request: one nlmsghdr + nfgenmsg (every family). */
export function encodeGetTables(seq: number): Buffer {
  const b = Buffer.alloc(HEADER + NFGEN);
  b.writeUInt32LE(b.length, 0);
  b.writeUInt16LE((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETTABLE, 4);
  b.writeUInt16LE(NLM_F_REQUEST | NLM_F_DUMP, 6);
  b.writeUInt32LE(seq, 8);
  return b;
}

/** The name attribute of one NEWTABLE message's payload (after nfgenmsg). */
function tableName(msg: Buffer): string | undefined {
  const name = attributes(msg, HEADER + NFGEN).get(NFTA_TABLE_NAME);
  return name === undefined ? undefined : cString(name);
}

/** One recv's worth of reply: the tables it names, and whether the dump ended (or the kernel's error). */
export function parseTableDump(chunk: Buffer): { tables: NftTableName[]; done: boolean; errno?: number } {
  const tables: NftTableName[] = [];
  for (const msg of splitMessages(chunk)) {
    const type = messageType(msg);
    if (type === NLMSG_DONE) return { tables, done: true };
    if (type === NLMSG_ERROR) {
      const errno = -msg.readInt32LE(HEADER);
      return errno === 0 ? { tables, done: true } : { tables, done: true, errno };
    }
    if (type === ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE)) {
      const name = tableName(msg);
      const family = FAMILIES[msg.readUInt8(HEADER)];
      if (name !== undefined && family !== undefined) tables.push({ family, name });
    }
  }
  return { tables, done: false };
}

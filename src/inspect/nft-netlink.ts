/**
 * The one nf_tables netlink exchange meshcap makes itself: a dump of the namespace's tables (NFT_MSG_GETTABLE),
 * what `nft list tables` asks the kernel, to tell a fresh pod from one with rules without starting a process.
 * Pure: the request's bytes and the reply's parse (linux/netlink.h, linux/netfilter/nfnetlink.h,
 * linux/netfilter/nf_tables.h); src/exec/native.ts does the socket I/O.
 */
import { attributes, cString, HEADER, messageType, NLM_F } from './netlink.js';

const NFNL_SUBSYS_NFTABLES = 10;
const NFT_MSG_NEWTABLE = 0;
const NFT_MSG_GETTABLE = 1;
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
  b.writeUInt16LE(NLM_F.REQUEST | NLM_F.DUMP, 6);
  b.writeUInt32LE(seq, 8);
  return b;
}

/** The name attribute of one NEWTABLE message's payload (after nfgenmsg). */
function tableName(msg: Buffer): string | undefined {
  const name = attributes(msg, HEADER + NFGEN).get(NFTA_TABLE_NAME);
  return name === undefined ? undefined : cString(name);
}

/** The tables a dump's data messages name (its reply as src/exec/native.ts collects it, read by readReply). */
export function tablesOf(messages: readonly Buffer[]): NftTableName[] {
  const tables: NftTableName[] = [];
  for (const msg of messages) {
    if (messageType(msg) !== ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE)) continue;
    const name = tableName(msg);
    const family = FAMILIES[msg.readUInt8(HEADER)];
    if (name !== undefined && family !== undefined) tables.push({ family, name });
  }
  return tables;
}

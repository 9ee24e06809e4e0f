/**
 * The one nf_tables netlink exchange meshcap makes itself: a dump of the namespace's tables (NFT_MSG_GETTABLE),
 * what `nft list tables` asks the kernel, to tell a fresh pod from one with rules without starting a process.
 * Pure: the request's bytes and the reply's parse (linux/netlink.h, linux/netfilter/nfnetlink.h,
 * linux/netfilter/nf_tables.h); src/exec/native.ts does the socket I/O.
 */

const NFNL_SUBSYS_NFTABLES = 10;
const NFT_MSG_NEWTABLE = 0;
const NFT_MSG_GETTABLE = 1;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const NLMSG_ERROR = 2;
const NLMSG_DONE = 3;
const NFTA_TABLE_NAME = 1;
const HEADER = 16;
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

const align4 = (n: number) => (n + 3) & ~3;

/** The name attribute of one NEWTABLE message's payload (after nfgenmsg). */
function tableName(msg: Buffer): string | undefined {
  for (let off = HEADER + NFGEN; off + 4 <= msg.length; ) {
    const len = msg.readUInt16LE(off);
    if (len < 4) return undefined;
    if ((msg.readUInt16LE(off + 2) & 0x3fff) === NFTA_TABLE_NAME) {
      const raw = msg.subarray(off + 4, off + len);
      const nul = raw.indexOf(0);
      return raw.subarray(0, nul < 0 ? raw.length : nul).toString('utf8');
    }
    off += align4(len);
  }
  return undefined;
}

/** One recv's worth of reply: the tables it names, and whether the dump ended (or the kernel's error). */
export function parseTableDump(chunk: Buffer): { tables: NftTableName[]; done: boolean; errno?: number } {
  const tables: NftTableName[] = [];
  for (let off = 0; off + HEADER <= chunk.length; ) {
    const len = chunk.readUInt32LE(off);
    if (len < HEADER || off + len > chunk.length) throw new Error(`malformed netlink reply (length ${len} at ${off})`);
    const msg = chunk.subarray(off, off + len);
    const type = msg.readUInt16LE(4);
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
    off += align4(len);
  }
  return { tables, done: false };
}

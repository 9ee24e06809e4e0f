/**
 * What every netlink exchange meshcap makes shares (linux/netlink.h): the message header, splitting one recv's
 * worth of reply into messages, walking a message's attributes, and reading a reply's ack or error (with the
 * kernel's reason). Pure; the nf_tables read
 * (nft-netlink.ts) and the routing messages (src/exec/rtnetlink.ts) are built on it, src/exec/native.ts does
 * the I/O: one exchange for both, native.ts's exchangeOn.
 */

/** sizeof(struct nlmsghdr). */
export const HEADER = 16;
export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;
/** nlmsghdr flags (NLM_F_*) of the requests meshcap sends. */
export const NLM_F = { REQUEST: 0x1, ACK: 0x4, REPLACE: 0x100, EXCL: 0x200, CREATE: 0x400, DUMP: 0x300 } as const;

export const align4 = (n: number) => (n + 3) & ~3;

/** The messages in one recv's worth of reply. */
export function splitMessages(chunk: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let off = 0; off + HEADER <= chunk.length; ) {
    const len = chunk.readUInt32LE(off);
    if (len < HEADER || off + len > chunk.length) throw new Error(`malformed netlink reply (length ${len} at ${off})`);
    out.push(chunk.subarray(off, off + len));
    off += align4(len);
  }
  return out;
}

export const messageType = (msg: Buffer) => msg.readUInt16LE(4);


/** A message's attributes from byte `from` on, by type (nesting and byte-order flags masked off); stops at a malformed one. */
export function attributes(msg: Buffer, from: number): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  for (let off = from; off + 4 <= msg.length; ) {
    const len = msg.readUInt16LE(off);
    if (len < 4 || off + len > msg.length) break;
    out.set(msg.readUInt16LE(off + 2) & 0x3fff, msg.subarray(off + 4, off + len));
    off += align4(len);
  }
  return out;
}

/** A NUL-terminated string attribute. */
export const cString = (a: Buffer) => a.subarray(0, a.indexOf(0) < 0 ? a.length : a.indexOf(0)).toString('utf8');

const NLM_F_CAPPED = 0x100;
const NLM_F_ACK_TLVS = 0x200;
const NLMSGERR_ATTR_MSG = 1;

export const messageSeq = (msg: Buffer) => msg.readUInt32LE(8);
/** The last message of a request's reply: its ack or error, or the end of a dump. */
export const endsReply = (msg: Buffer) => messageType(msg) === NLMSG_ERROR || messageType(msg) === NLMSG_DONE;

/** What the kernel answered one request: its data messages, and its errno (0: done) with the reason it gave. */
export interface Reply {
  readonly data: readonly Buffer[];
  readonly errno: number;
  readonly reason?: string;
}

function extackMessage(msg: Buffer): string | undefined {
  const flags = msg.readUInt16LE(6);
  if ((flags & NLM_F_ACK_TLVS) === 0) return undefined;
  const echoed = flags & NLM_F_CAPPED ? HEADER : align4(msg.readUInt32LE(HEADER + 4));
  const attr = attributes(msg, HEADER + 4 + echoed).get(NLMSGERR_ATTR_MSG);
  return attr === undefined ? undefined : cString(attr);
}

/** A request's reply messages (as native.ts returns them) → its data and its outcome. */
export function readReply(messages: readonly Buffer[]): Reply {
  const last = messages.at(-1);
  const data = messages.filter((m) => !endsReply(m));
  if (last === undefined || !endsReply(last)) return { data, errno: 0 };
  if (last.length < HEADER + 4) return { data, errno: 0 };
  const code = last.readInt32LE(HEADER);
  if (code >= 0) return { data, errno: 0 };
  const reason = messageType(last) === NLMSG_ERROR ? extackMessage(last) : undefined;
  return reason === undefined ? { data, errno: -code } : { data, errno: -code, reason };
}

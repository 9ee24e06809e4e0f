/**
 * What every netlink exchange meshcap makes shares (linux/netlink.h): the message header, splitting one recv's
 * worth of reply into messages, and walking a message's attributes. Pure; the nf_tables read
 * (nft-netlink.ts) and the routing messages (src/exec/rtnetlink.ts) are built on it, src/exec/native.ts does
 * the I/O.
 */

/** sizeof(struct nlmsghdr). */
export const HEADER = 16;
export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;

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

import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

/** A process in the namespace, with the ids the owner match sees (the fs ids) and the sockets it holds. */
export interface ProcessInfo {
  readonly pid: number;
  readonly comm: string;
  readonly uid: number;
  readonly fsuid: number;
  readonly gid: number;
  readonly fsgid: number;
  /** Inodes of the sockets among its open files. */
  readonly sockets: readonly number[];
}

/** `Uid:` and `Gid:` of /proc/<pid>/status: real, effective, saved and fs ids. */
export function parseStatusIds(text: string): { uid: number; fsuid: number; gid: number; fsgid: number } | undefined {
  const ids = (key: string) => /^(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$/.exec(text.match(new RegExp(`^${key}:\\s*(.*)$`, 'm'))?.[1]?.trim() ?? '');
  const u = ids('Uid');
  const g = ids('Gid');
  if (u === null || g === null) return undefined;
  return { uid: Number(u[1]), fsuid: Number(u[4]), gid: Number(g[1]), fsgid: Number(g[4]) };
}

/**
 * An id as the process's own user namespace sees it, from its `uid_map`/`gid_map` ("inside outside count"
 * lines, outside = this reader's ids): a pod with `hostUsers: false` runs its proxy as its 1337, which the
 * node sees as 201337. An id no line maps stays as the node sees it.
 */
export function mapIdInward(id: number, map: string): number {
  for (const line of map.split('\n')) {
    const [inside, outside, count] = line.trim().split(/\s+/).map(Number);
    if (inside === undefined || outside === undefined || count === undefined || Number.isNaN(count)) continue;
    if (id >= outside && id < outside + count) return inside + (id - outside);
  }
  return id;
}

function tryRead<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    // The process ended while we looked, or it is not ours to read: it is simply not listed.
    return undefined;
  }
}

/** The namespace's identity: the inode of its nsfs file (`/proc/<pid>/ns/net`, `/run/netns/<name>`). */
export function namespaceInode(path: string): number {
  return statSync(path).ino;
}

function socketsOf(proc: string, pid: number): number[] {
  const fds = tryRead(() => readdirSync(`${proc}/${pid}/fd`)) ?? [];
  return fds.flatMap((fd) => {
    const m = /^socket:\[(\d+)\]$/.exec(tryRead(() => readlinkSync(`${proc}/${pid}/fd/${fd}`)) ?? '');
    return m ? [Number(m[1])] : [];
  });
}

/**
 * Every process whose network namespace is `inode` (the same /proc/<pid>/ns/net), read from /proc without
 * entering anything. `exclude` leaves out pids (meshcap itself).
 */
export function readNamespaceProcesses(inode: number, exclude: readonly number[] = [], proc = '/proc'): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (exclude.includes(pid) || tryRead(() => statSync(`${proc}/${pid}/ns/net`).ino) !== inode) continue;
    const ids = parseStatusIds(tryRead(() => readFileSync(`${proc}/${pid}/status`, 'utf8')) ?? '');
    const comm = tryRead(() => readFileSync(`${proc}/${pid}/comm`, 'utf8'))?.replace(/\n$/, '');
    if (ids === undefined || comm === undefined) continue;
    const uids = tryRead(() => readFileSync(`${proc}/${pid}/uid_map`, 'utf8')) ?? '';
    const gids = tryRead(() => readFileSync(`${proc}/${pid}/gid_map`, 'utf8')) ?? '';
    const inward = { uid: mapIdInward(ids.uid, uids), fsuid: mapIdInward(ids.fsuid, uids), gid: mapIdInward(ids.gid, gids), fsgid: mapIdInward(ids.fsgid, gids) };
    out.push({ pid, comm, ...inward, sockets: socketsOf(proc, pid) });
  }
  return out;
}

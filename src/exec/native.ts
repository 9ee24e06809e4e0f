import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
import { encodeGetTables, tablesOf, type NftTableName } from '../inspect/nft-netlink.js';
import { endsReply, messageSeq, readReply, splitMessages } from '../inspect/netlink.js';

/**
 * The one place that makes the native calls Node and Bun lack: ioctl(2), setns(2) and a netlink socket.
 * Nothing else knows how they are made: in the self-contained executable through Bun's built-in `bun:ffi`, under Node through the koffi
 * package; where neither loads, the namespace's owner is still read by a spawned `perl` (Debian's perl-base,
 * whose `ioctl` builtin makes the same call) — enough to refuse such a pod precisely, not to enter it.
 * `MESHCAP_NATIVE=spawn` forces that fallback (the test suites prove both paths).
 */

/** ioctl(2) on nsfs files (linux/nsfs.h): the user namespace that owns a namespace, as a new fd. */
const NS_GET_USERNS = 0xb701;

/** A libc call's result: the return value, and errno when it is negative. */
interface CallResult {
  readonly result: number;
  readonly errno: number;
}

/** The libc calls meshcap makes; every one returns its raw result and errno (no throwing here). */
interface Libc {
  ioctl(fd: number, request: number): CallResult;
  setns(fd: number, nstype: number): CallResult;
  socket(domain: number, type: number, protocol: number): CallResult;
  send(fd: number, buf: Buffer): CallResult;
  recv(fd: number, buf: Buffer): CallResult;
  setsockopt(fd: number, level: number, name: number, value: Buffer): CallResult;
}


/** glibc's soname at an absolute path (Bun retries a bare name relative to the cwd). */
const LIBC_PATHS = ['/lib/x86_64-linux-gnu/libc.so.6', '/usr/lib/x86_64-linux-gnu/libc.so.6', '/lib/aarch64-linux-gnu/libc.so.6', '/usr/lib/aarch64-linux-gnu/libc.so.6', '/lib64/libc.so.6', '/usr/lib64/libc.so.6', '/lib/libc.so.6'];

function findLibc(): string {
  const found = LIBC_PATHS.find((p) => existsSync(p));
  if (found === undefined) throw new Error(`no glibc found at ${LIBC_PATHS.join(', ')}`);
  return found;
}

/** The minimal surface of bun:ffi meshcap uses (Bun's types are not a dependency). */
interface BunFfi {
  dlopen(path: string, symbols: Record<string, { args: string[]; returns: string }>): { symbols: Record<string, (...a: unknown[]) => unknown> };
  read: { i32(ptr: unknown, offset: number): number };
}

interface Koffi {
  load(path: string): { func(signature: string): (...a: unknown[]) => unknown };
  errno(): number;
}

/**
 * Loads an optional native module: `require` in the CommonJS bundles (the Node loader runs them through
 * node:vm, which has no dynamic import), `import()` where the source runs as ESM (tests).
 */
async function loadModule<T>(name: 'bun:ffi' | 'koffi'): Promise<T> {
  const mod: unknown = typeof require === 'function' ? require(name) : await import(name);
  return ((mod as { default?: T }).default ?? mod) as T;
}

type Raw = (...args: unknown[]) => number | bigint;

/** Wraps raw libc functions (by name) with errno capture. */
function wrapLibc(fn: (name: keyof Libc) => Raw, errno: () => number): Libc {
  const call = (name: keyof Libc) => {
    const f = fn(name);
    return (...args: unknown[]): CallResult => {
      const result = Number(f(...args));
      return { result, errno: result < 0 ? errno() : 0 };
    };
  };
  const ioctl = call('ioctl');
  const setns = call('setns');
  const socket = call('socket');
  const send = call('send');
  const recv = call('recv');
  const setsockopt = call('setsockopt');
  return {
    ioctl: (fd, req) => ioctl(fd, req),
    setns: (fd, type) => setns(fd, type),
    socket: (d, t, p) => socket(d, t, p),
    send: (fd, buf) => send(fd, buf, buf.length, 0),
    recv: (fd, buf) => recv(fd, buf, buf.length, 0),
    setsockopt: (fd, level, name, value) => setsockopt(fd, level, name, value, value.length),
  };
}

async function loadBunFfi(): Promise<Libc> {
  const ffi = await loadModule<BunFfi>('bun:ffi');
  const lib = ffi.dlopen(findLibc(), {
    ioctl: { args: ['i32', 'u64'], returns: 'i32' },
    setns: { args: ['i32', 'i32'], returns: 'i32' },
    socket: { args: ['i32', 'i32', 'i32'], returns: 'i32' },
    send: { args: ['i32', 'ptr', 'u64', 'i32'], returns: 'i64' },
    recv: { args: ['i32', 'ptr', 'u64', 'i32'], returns: 'i64' },
    setsockopt: { args: ['i32', 'i32', 'i32', 'ptr', 'u32'], returns: 'i32' },
    __errno_location: { args: [], returns: 'ptr' },
  });
  const errnoAt = lib.symbols['__errno_location'] as () => unknown;
  return wrapLibc((name) => lib.symbols[name] as Raw, () => ffi.read.i32(errnoAt(), 0));
}

const KOFFI_SIGNATURES: Record<keyof Libc, string> = {
  ioctl: 'int ioctl(int fd, unsigned long request)',
  setns: 'int setns(int fd, int nstype)',
  socket: 'int socket(int domain, int type, int protocol)',
  send: 'intptr_t send(int fd, const void *buf, size_t len, int flags)',
  recv: 'intptr_t recv(int fd, _Out_ void *buf, size_t len, int flags)',
  setsockopt: 'int setsockopt(int fd, int level, int name, const void *value, uint32_t len)',
};

async function loadKoffi(): Promise<Libc> {
  const koffi = await loadModule<Koffi>('koffi');
  const lib = koffi.load(findLibc());
  return wrapLibc((name) => lib.func(KOFFI_SIGNATURES[name]) as Raw, () => koffi.errno());
}

let loaded: Promise<Libc | Error> | undefined;

/** bun:ffi under Bun, koffi under Node; the reason when neither loads (or MESHCAP_NATIVE=spawn). Loaded once. */
function loadNative(): Promise<Libc | Error> {
  loaded ??= (async () => {
    if (process.env['MESHCAP_NATIVE'] === 'spawn') throw new Error('MESHCAP_NATIVE=spawn');
    return process.versions['bun'] !== undefined ? loadBunFfi() : loadKoffi();
  })().catch((err: unknown) => new Error(`native calls unavailable (${(err as Error).message.split('\n')[0]})`));
  return loaded;
}

/** Who owns a namespace file, as far as this process can tell. */
export type NamespaceOwner =
  | { readonly kind: 'own' }
  /** Another user namespace; `open` returns a new fd of it (the caller closes it), throws when it cannot. */
  | { readonly kind: 'foreign'; readonly id: string; readonly open: () => number }
  /** Neither the native call nor the fallback could tell. */
  | { readonly kind: 'unknown'; readonly why: string };

const userNamespaceId = (ino: number | bigint) => `user:[${ino}]`;

/** The inode of the user namespace that owns `path`, read by perl's ioctl (the spawning fallback). */
function ownerInodeBySpawn(path: string): number | string {
  const script = 'open(my $f, "<", $ARGV[0]) or die "open: $!\\n"; my $r = ioctl($f, 0xb701, 0); defined $r or die "ioctl: $!\\n"; open(my $u, "<&=", int($r)) or die "fdopen: $!\\n"; print((stat($u))[1], "\\n");';
  const r = spawnSync('perl', ['-e', script, path], { encoding: 'utf8' });
  if (r.error !== undefined) return `perl: ${r.error.message}`;
  const ino = Number(r.stdout.trim());
  return r.status === 0 && Number.isSafeInteger(ino) && ino > 0 ? ino : `perl: ${r.stderr.trim() || `exit ${r.status}`}`;
}

/**
 * Which user namespace owns the namespace at `path` (NS_GET_USERNS), compared with this process's own. A
 * netns made by a runtime for a pod with `hostUsers: false` is owned by the pod's user namespace, and the
 * kernel refuses owner matches written from any other. Throws only when `path` cannot be opened.
 */
export async function findNamespaceOwner(path: string): Promise<NamespaceOwner> {
  const own = statSync('/proc/self/ns/user').ino;
  const native = await loadNative();
  if (native instanceof Error) {
    const ino = ownerInodeBySpawn(path);
    if (typeof ino === 'string') return { kind: 'unknown', why: `${native.message}; ${ino}` };
    if (ino === own) return { kind: 'own' };
    return { kind: 'foreign', id: userNamespaceId(ino), open: () => { throw new Error(`entering ${userNamespaceId(ino)} needs ioctl(NS_GET_USERNS): ${native.message}`); } };
  }
  const open = (): number => {
    const ns = openSync(path, 'r');
    try {
      const { result, errno } = native.ioctl(ns, NS_GET_USERNS);
      if (result < 0) throw new Error(`ioctl(NS_GET_USERNS) on ${path} failed (errno ${errno})`);
      return result;
    } finally {
      closeSync(ns);
    }
  };
  const fd = open();
  try {
    const ino = fstatSync(fd).ino;
    return ino === own ? { kind: 'own' } : { kind: 'foreign', id: userNamespaceId(ino), open };
  } finally {
    closeSync(fd);
  }
}

const CLONE_NEWNET = 0x40000000;
const AF_NETLINK = 16;
const SOCK_RAW_CLOEXEC = 3 | 0x80000;
const NETLINK_NETFILTER = 12;

/** What a namespace holds, read in-process: its nf_tables tables and its legacy iptables table names. */
export interface NamespaceProbe {
  readonly nftTables: readonly NftTableName[];
  /** /proc/net/ip{6}_tables_names inside the namespace; undefined when the legacy module is not loaded. */
  readonly legacyTables: { readonly ipv4: string | undefined; readonly ipv6: string | undefined };
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function dumpNftTables(libc: Libc): NftTableName[] {
  const [reply = []] = exchangeOn(libc, NETLINK_NETFILTER, [encodeGetTables(1)]);
  const r = readReply(reply);
  if (r.errno !== 0) throw new Error(`nf_tables dump failed (errno ${r.errno})`);
  return tablesOf(r.data);
}

/**
 * Reads a network namespace without starting a process: this thread — the JS thread, which every child is
 * forked from — enters it with setns(2), dumps its nf_tables tables over netlink and reads its legacy table
 * names from /proc/self/net (which follows this thread), then goes back. Nothing asynchronous runs while it is
 * inside; if the way back fails the process aborts rather than go on in the pod's namespace. Without `path`
 * it reads meshcap's own namespace (istio-init inside the pod: no setns, which would need CAP_SYS_ADMIN).
 * Undefined when the native calls are unavailable or refused (the caller reads with processes, as before).
 */
export async function probeNamespace(path: string | undefined): Promise<NamespaceProbe | undefined> {
  const libc = await loadNative();
  if (libc instanceof Error) return undefined;
  try {
    return path === undefined ? readHere(libc) : probeOther(libc, path);
  } catch {
    return undefined;
  }
}

function readHere(libc: Libc): NamespaceProbe {
  return { nftTables: dumpNftTables(libc), legacyTables: { ipv4: readOptional('/proc/self/net/ip_tables_names'), ipv6: readOptional('/proc/self/net/ip6_tables_names') } };
}

function probeOther(libc: Libc, path: string): NamespaceProbe {
  return whileInside(libc, path, () => readHere(libc));
}

/**
 * Runs `fn` (synchronous) with this thread in the network namespace at `path`; back in its own afterwards, or
 * abort. `fn` runs only once the thread is seen to be in that very namespace (its /proc/thread-self/ns/net is
 * the file at `path`): nothing meant for a pod is ever done in the node's namespace.
 */
function whileInside<T>(libc: Libc, path: string, fn: () => T): T {
  const home = openSync('/proc/thread-self/ns/net', 'r');
  try {
    const target = openSync(path, 'r');
    let want: { dev: number; ino: number };
    try {
      want = fstatSync(target);
      const entered = libc.setns(target, CLONE_NEWNET);
      if (entered.result < 0) throw new Error(`setns(${path}) failed (errno ${entered.errno})`);
    } finally {
      closeSync(target);
    }
    try {
      const now = statSync('/proc/thread-self/ns/net');
      if (now.ino !== want.ino || now.dev !== want.dev) throw new Error(`setns(${path}) left this thread in net:[${now.ino}], not in the namespace asked for`);
      return fn();
    } finally {
      if (libc.setns(home, CLONE_NEWNET).result < 0) {
        process.stderr.write("meshcap: cannot return to its own network namespace after entering a pod's; aborting\n");
        process.abort();
      }
    }
  } finally {
    closeSync(home);
  }
}

/**
 * Starts a child in the network namespace at `path` without nsenter: `start` (which must fork synchronously,
 * as child_process.spawn does, from this thread) runs while this thread is inside, so the child is born there.
 * Undefined when the native calls are unavailable or the namespace cannot be entered (the caller uses nsenter,
 * which names the problem).
 */
export async function startInNetns<T>(path: string, start: () => T): Promise<T | undefined> {
  const libc = await loadNative();
  if (libc instanceof Error) return undefined;
  let started = false;
  try {
    return whileInside(libc, path, () => {
      started = true;
      return start();
    });
  } catch (err) {
    if (started) throw err;
    return undefined;
  }
}

const NETLINK_ROUTE = 0;
const SOL_SOCKET = 1;
const SO_RCVTIMEO = 20;
const SOL_NETLINK = 270;
const NETLINK_EXT_ACK = 11;
/** A kernel that does not answer within this long is an error, not a hang of the pod's start. */
const REPLY_TIMEOUT_S = 10;
const REPLY_BUFFER = 1 << 18;

function setOption(libc: Libc, fd: number, level: number, name: number, value: Buffer): void {
  const r = libc.setsockopt(fd, level, name, value);
  if (r.result < 0) throw new Error(`netlink setsockopt(${level}, ${name}) failed (errno ${r.errno})`);
}

/**
 * Sends each request in turn on one netlink socket of `protocol` and collects its reply (up to its ack, error
 * or end of dump); stops after a refused one. The one exchange of both readers (nf_tables, rtnetlink).
 */
function exchangeOn(libc: Libc, protocol: number, requests: readonly Buffer[]): Buffer[][] {
  const sock = libc.socket(AF_NETLINK, SOCK_RAW_CLOEXEC, protocol);
  if (sock.result < 0) throw new Error(`netlink socket failed (errno ${sock.errno})`);
  const fd = sock.result;
  try {
    const timeout = Buffer.alloc(16);
    timeout.writeBigInt64LE(BigInt(REPLY_TIMEOUT_S), 0);
    setOption(libc, fd, SOL_SOCKET, SO_RCVTIMEO, timeout);
    // The kernel's reason with its errno (extended acks), as `ip` prints it.
    setOption(libc, fd, SOL_NETLINK, NETLINK_EXT_ACK, Buffer.from([1, 0, 0, 0]));
    const buf = Buffer.alloc(REPLY_BUFFER);
    const replies: Buffer[][] = [];
    for (const [i, request] of requests.entries()) {
      const seq = i + 1;
      const msg = Buffer.from(request);
      msg.writeUInt32LE(seq, 8);
      const sent = libc.send(fd, msg);
      if (sent.result < 0) throw new Error(`netlink send failed (errno ${sent.errno})`);
      const reply: Buffer[] = [];
      while (!(reply.length > 0 && endsReply(reply[reply.length - 1] as Buffer))) {
        const got = libc.recv(fd, buf);
        if (got.result < 0) throw new Error(`netlink recv failed (errno ${got.errno})`);
        if (got.result === 0 || got.result >= buf.length) throw new Error(`netlink reply ${got.result === 0 ? 'ended early' : 'too large'}`);
        // Copies: the buffer is read into again.
        reply.push(...splitMessages(Buffer.from(buf.subarray(0, got.result))).filter((m) => messageSeq(m) === seq));
      }
      replies.push(reply);
      if (readReply(reply).errno !== 0) break;
    }
    return replies;
  } finally {
    closeSync(fd);
  }
}

/**
 * rtnetlink without a process: the requests (src/exec/rtnetlink.ts; each acked or a dump) are sent one after
 * another on a NETLINK_ROUTE socket opened in the network namespace at `path` — this thread enters it, as
 * for the probe — or in meshcap's own without `path` (istio-init in the pod). Each request's reply messages,
 * up to its ack, error or end of dump; like `ip -batch`, nothing is sent after the first request the kernel
 * refuses. Undefined, with nothing sent, when the native calls are unavailable or the namespace cannot be
 * entered (the caller runs `ip`, which names the problem). Throws when the exchange itself fails.
 */
export async function exchangeRoute(path: string | undefined, requests: readonly Buffer[]): Promise<Buffer[][] | undefined> {
  const libc = await loadNative();
  if (libc instanceof Error) return undefined;
  if (path === undefined) return exchangeOn(libc, NETLINK_ROUTE, requests);
  let entered = false;
  try {
    return whileInside(libc, path, () => {
      entered = true;
      return exchangeOn(libc, NETLINK_ROUTE, requests);
    });
  } catch (err) {
    if (entered) throw err;
    return undefined;
  }
}

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, statSync } from 'node:fs';

/**
 * The one place that makes the native calls Node and Bun lack (ioctl(2) today). Nothing else knows how they
 * are made: in the self-contained executable through Bun's built-in `bun:ffi`, under Node through the koffi
 * package; where neither loads, the namespace's owner is still read by a spawned `perl` (Debian's perl-base,
 * whose `ioctl` builtin makes the same call) — enough to refuse such a pod precisely, not to enter it.
 * `MESHCAP_NATIVE=spawn` forces that fallback (the test suites prove both paths).
 */

/** ioctl(2) on nsfs files (linux/nsfs.h): the user namespace that owns a namespace, as a new fd. */
const NS_GET_USERNS = 0xb701;

type Ioctl = (fd: number, request: number) => { readonly result: number; readonly errno: number };

interface Loaded {
  readonly via: 'bun:ffi' | 'koffi';
  readonly ioctl: Ioctl;
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

async function loadBunFfi(): Promise<Loaded> {
  const ffi = await loadModule<BunFfi>('bun:ffi');
  const lib = ffi.dlopen(findLibc(), { ioctl: { args: ['i32', 'u64'], returns: 'i32' }, __errno_location: { args: [], returns: 'ptr' } });
  const ioctl = lib.symbols['ioctl'] as (fd: number, req: number) => number;
  const errnoAt = lib.symbols['__errno_location'] as () => unknown;
  return { via: 'bun:ffi', ioctl: (fd, req) => {
    const result = ioctl(fd, req);
    return { result, errno: result < 0 ? ffi.read.i32(errnoAt(), 0) : 0 };
  } };
}

async function loadKoffi(): Promise<Loaded> {
  const koffi = await loadModule<Koffi>('koffi');
  const ioctl = koffi.load(findLibc()).func('int ioctl(int fd, unsigned long request)') as (fd: number, req: number) => number;
  return { via: 'koffi', ioctl: (fd, req) => {
    const result = ioctl(fd, req);
    return { result, errno: result < 0 ? koffi.errno() : 0 };
  } };
}

let loaded: Promise<Loaded | Error> | undefined;

/** bun:ffi under Bun, koffi under Node; the reason when neither loads (or MESHCAP_NATIVE=spawn). Loaded once. */
function loadNative(): Promise<Loaded | Error> {
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

/** Which native layer is in use (for logs and tests): 'bun:ffi', 'koffi', or why neither. */
export async function describeNative(): Promise<string> {
  const native = await loadNative();
  return native instanceof Error ? native.message : native.via;
}

import type { Parsed } from '../model/cidr.js';
import type { OwnerId } from '../model/rule.js';

/**
 * Parsers for raw string inputs (flags, env vars, CNI fields, annotations). Each one turns a string into a
 * typed value or fails with a reason; nothing that fails here can reach the restore text. Pure, and free of
 * zod and ipaddr.js (src/config/fields.ts lifts these into schemas; the address lists live with the
 * schema, src/config/schema.ts), so the plugin's fast path (cni/front.ts) loads neither.
 */

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

const DECIMAL = /^(0|[1-9][0-9]*)$/;

function parseUint(s: string, min: number, max: number, what: string): Parsed<number> {
  if (!DECIMAL.test(s)) return fail(`${what} must be a decimal integer ${min}-${max} without sign or leading zeros`);
  const n = Number(s);
  if (n < min || n > max) return fail(`${what} must be ${min}-${max}`);
  return ok(n);
}

export const parsePort = (s: string) => parseUint(s, 1, 65535, 'port');
/** A port in a match list: 0 is accepted as Istio accepts it (a rule for port 0 matches nothing). */
export const parseListPort = (s: string) => parseUint(s, 0, 65535, 'port');
export const MAX_ID = 4294967294; // 2^32-2: (uid_t)-1 means "no id" to the kernel
export const parseId = (s: string) => parseUint(s, 0, MAX_ID, 'id');

/** istio-iptables splits lists on "," and drops empty items (tools/common/config Split). */
export function splitList(s: string): string[] {
  return s.split(',').filter((item) => item !== '');
}

/** Spaces and tabs around a value: what iptables-restore's tokenizer drops (a newline would end its line). */
export function trimBlanks(s: string): string {
  return s.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * Each item parsed; with `trim`, each item's spaces and tabs are trimmed first. istio-iptables does not trim, but it writes the
 * items into iptables-restore text, whose tokenizer drops the spaces around a port or an interface name — so
 * " 80" works there and works here; a CIDR with a space fails Go's ParsePrefix there and fails here.
 */
export function parseEach<T>(s: string, parse: (item: string) => Parsed<T>, max = Infinity, trim = false): Parsed<T[]> {
  const items = splitList(s).map((item) => (trim ? trimBlanks(item) : item));
  if (items.length > max) return fail(`at most ${max} entries are allowed, got ${items.length}`);
  const out: T[] = [];
  for (const item of items) {
    const r = parse(item);
    if (!r.ok) return fail(`${JSON.stringify(item)}: ${r.reason}`);
    out.push(r.value);
  }
  return ok(out);
}

export const parsePortList = (s: string) => parseEach(s, parseListPort, Infinity, true);

/** `*` (all ports) or a port list; `""` is an empty list (no capture). */
export function parsePortsOrAll(s: string): Parsed<'*' | number[]> {
  return s === '*' ? ok('*') : parsePortList(s);
}

/**
 * Interface names as the kernel accepts them (at most 15 bytes; not "." or ".."; no "/", ":" or white
 * space), narrowed further so a name can never read as an iptables option or restore syntax: letters,
 * digits, "_", "-", "." and "@", not starting with "-", with iptables' "+" wildcard allowed at the end.
 */
export function parseInterface(s: string): Parsed<string> {
  if (s === '') return fail('interface name is empty');
  if (Buffer.byteLength(s) > 15) return fail('interface name is longer than 15 bytes');
  if (s === '.' || s === '..') return fail('interface name cannot be "." or ".."');
  if (!/^[A-Za-z0-9_.@][A-Za-z0-9_.@-]*\+?$/.test(s)) {
    return fail('interface name may hold only letters, digits, "_", "-", ".", "@" and a trailing "+"');
  }
  return ok(s);
}
export const parseInterfaceList = (s: string) => parseEach(s, parseInterface, Infinity, true);

function parseNumericOwner(s: string): Parsed<OwnerId> {
  const r = parseId(s);
  return r.ok ? ok({ text: s, id: r.value }) : r;
}
/** Proxy UIDs/GIDs: numeric only, so the kernel never needs an NSS lookup to match them. */
export const parseIdList = (s: string) => parseEach(s, parseNumericOwner);

const GROUP_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/;

/** A group given as a number, or as a name (POSIX portable characters); names are resolved later. */
export function parseOwnerGroup(s: string): Parsed<OwnerId> {
  if (DECIMAL.test(s)) return parseNumericOwner(s);
  if (!GROUP_NAME.test(s)) return fail('not a group id or a valid group name');
  return ok({ text: s, id: undefined });
}

/** Istio allows at most 64 owner groups. */
export const MAX_OWNER_GROUPS = 64;
export function parseOwnerGroupsOrAll(s: string): Parsed<'*' | OwnerId[]> {
  if (s === '*') return ok('*');
  const r = parseEach(s, parseOwnerGroup, MAX_OWNER_GROUPS);
  // An empty include list would render `-m owner`-less RETURN: nothing would be captured.
  return r.ok && r.value.length === 0 ? fail('must be "*" or a non-empty list of groups') : r;
}
export const parseOwnerGroupList = (s: string) => parseEach(s, parseOwnerGroup, MAX_OWNER_GROUPS);

/** Go's strconv.ParseBool, which Istio's flags and env vars use. */
export function parseGoBool(s: string): Parsed<boolean> {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return ok(true);
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return ok(false);
  return fail('must be a boolean (true/false, 1/0, t/f)');
}

/** A packet mark: decimal 1-4294967295 (Istio's route setup needs a decimal integer). */
export const parseMark = (s: string) => parseUint(s, 1, 0xffffffff, 'mark');

/** A routing table id; 0 and the kernel's own tables (253 default, 254 main, 255 local) are refused. */
export function parseRouteTable(s: string): Parsed<number> {
  const r = parseUint(s, 1, 0xffffffff, 'route table');
  if (r.ok && r.value >= 253 && r.value <= 255) return fail('route tables 253 (default), 254 (main) and 255 (local) are the kernel\'s own');
  return r;
}

const DURATION_UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration syntax ("5s", "1m30s", "250ms"), positive, to milliseconds. */
export function parseDuration(s: string): Parsed<number> {
  const parts = [...s.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== s) return fail('must be a duration such as 5s, 500ms or 1m');
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * (DURATION_UNIT_MS[p[2] ?? 's'] ?? 0), 0);
  return ms > 0 ? ok(ms) : fail('duration must be positive');
}

/** A file path: absolute, printable, no newline. */
export function parsePath(s: string): Parsed<string> {
  if (!s.startsWith('/')) return fail('must be an absolute path');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(s)) return fail('must not contain control characters');
  return ok(s);
}

export function parseEnum<T extends string>(values: readonly T[]) {
  return (s: string): Parsed<T> =>
    (values as readonly string[]).includes(s) ? ok(s as T) : fail(`must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`);
}


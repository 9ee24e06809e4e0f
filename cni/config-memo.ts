import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSION } from '../src/version.js';
import { isObject } from './spec.js';

/**
 * The node's plugin config, remembered once the one schema (src/node/plugin-config.ts) has accepted it.
 * Every call on a node carries the same network entry; the runtime adds only the per-call parts below. The
 * full path leaves its verdict here, so a later call with the very same entry can decide a pass-through
 * before zod and pino are loaded (cni/pass-through.ts). A memo holds the entry's text and is used only when
 * that text is identical; it names meshcap's version, so another build never trusts it. Best effort both
 * ways: a memo that cannot be written or read only means the full path runs.
 *
 * Writing one removes the memos of other meshcap versions.
 *
 * Where: /run/meshcap/cni-config (root's, cleared at boot), or `MESHCAP_CNI_MEMO_DIR` (an absolute path;
 * `off` turns the memo off; any other value is ignored and the memo is off).
 */

/** What the runtime adds per call; everything else is the network's entry, the same for every pod. */
export const PER_CALL_FIELDS: ReadonlySet<string> = new Set(['prevResult', 'runtimeConfig', 'args', 'cni.dev/valid-attachments']);

const DEFAULT_DIR = '/run/meshcap/cni-config';

/** Where the memos are; undefined when the memo is off. */
export function memoDir(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const given = env['MESHCAP_CNI_MEMO_DIR'];
  if (given === undefined || given === '') return DEFAULT_DIR;
  return given.startsWith('/') ? given : undefined;
}

/** JSON with every object's keys sorted: one text per entry, whatever order the runtime wrote it in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** The network's entry of a config as one text (the config without its per-call fields). */
export function entryText(json: Record<string, unknown>): string {
  return canonical(Object.fromEntries(Object.entries(json).filter(([k]) => !PER_CALL_FIELDS.has(k))));
}

/** FNV-1a (32 bits) of the text: only the memo's file name; the text itself is compared. */
function nameOf(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return `${VERSION}-${h.toString(16).padStart(8, '0')}.json`;
}

interface Memo {
  readonly version: string;
  readonly entry: string;
  /** The schema's output for the entry (defaults filled in), without per-call fields. */
  readonly conf: Record<string, unknown>;
}

/** The schema's output for this entry, when a memo of exactly this text is there. */
export function recall(dir: string, entry: string): Record<string, unknown> | undefined {
  try {
    const memo = JSON.parse(readFileSync(join(dir, nameOf(entry)), 'utf8')) as Partial<Memo>;
    return memo.version === VERSION && memo.entry === entry && isObject(memo.conf) ? memo.conf : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Leaves the schema's verdict on an accepted config (stdin's text, the schema's output) for later calls;
 * written to a temporary name, then renamed: never half a memo.
 */
export function remember(env: Readonly<Record<string, string | undefined>>, stdin: string, conf: Readonly<Record<string, unknown>>): void {
  const dir = memoDir(env);
  if (dir === undefined) return;
  try {
    const entry = entryText(JSON.parse(stdin) as Record<string, unknown>);
    if (recall(dir, entry) !== undefined) return;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, nameOf(entry));
    const tmp = `${file}.${process.pid}.tmp`;
    const kept = Object.fromEntries(Object.entries(conf).filter(([k]) => !PER_CALL_FIELDS.has(k)));
    writeFileSync(tmp, JSON.stringify({ version: VERSION, entry, conf: kept } satisfies Memo), { mode: 0o600 });
    renameSync(tmp, file);
    // Another build's memos are never read again: an upgrade leaves none behind.
    for (const f of readdirSync(dir)) if (f.endsWith('.json') && !f.startsWith(`${VERSION}-`)) rmSync(join(dir, f), { force: true });
  } catch {
    // A memo is only a shortcut: the full path stays correct without it.
  }
}

/**
 * Safe reads of untrusted manifest data: every accessor takes `unknown` and answers undefined (or empty)
 * for anything of the wrong shape, so a malformed manifest never throws.
 */

export type Data = Readonly<Record<string, unknown>>;

export function asRecord(v: unknown): Data | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Data) : undefined;
}

export function field(v: unknown, ...path: string[]): unknown {
  let cur = v;
  for (const key of path) {
    const rec = asRecord(cur);
    if (rec === undefined || !Object.hasOwn(rec, key)) return undefined;
    cur = rec[key];
  }
  return cur;
}

export function asString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A list of records (non-record items are dropped). */
export function records(v: unknown): Data[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((x: unknown) => {
    const r = asRecord(x);
    return r === undefined ? [] : [r];
  });
}

/** A whole number (Kubernetes int64/int32 fields), or undefined. */
export function asInteger(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined;
}

/**
 * A labels or annotations map as strings. Kubernetes requires string values; a YAML scalar left unquoted
 * (`inject: true`, `port: 15020`) is read as its text, which is what a user meant to write.
 */
export function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(asRecord(v) ?? {})) {
    if (typeof x === 'string') out[k] = x;
    else if (typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
  }
  return out;
}

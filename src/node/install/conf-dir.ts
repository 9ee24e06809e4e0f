import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/**
 * The node's CNI conf dir as containerd (go-cni) reads it: `.conf`, `.conflist` and `.json` files in name
 * order; the first one loads. Pure over a directory listing and file reads; never writes.
 */

export const CNI_EXTENSIONS = ['.conf', '.conflist', '.json'] as const;
export const PLUGIN_TYPE = 'meshcap-cni';

export type Json = Record<string, unknown>;
export const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

export interface ConfFile {
  readonly name: string;
  readonly path: string;
  readonly text: string;
  readonly json: Json;
  /** `.conflist`: a list of plugins; `.conf`/`.json`: one plugin's config. */
  readonly isList: boolean;
}

/** Names with a CNI extension, in the order containerd loads them (byte order, as Go's sort.Strings). */
export function listConfNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => (CNI_EXTENSIONS as readonly string[]).includes(extname(n)))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A config file that loads: a list with at least one plugin, or a single config with a `type`; else undefined. */
export function readConf(dir: string, name: string): ConfFile | undefined {
  const path = join(dir, name);
  let text: string;
  let json: unknown;
  try {
    text = readFileSync(path, 'utf8');
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(json)) return undefined;
  const isList = extname(name) === '.conflist';
  if (isList && !(Array.isArray(json['plugins']) && json['plugins'].length > 0 && json['plugins'].every(isObject))) return undefined;
  if (!isList && typeof json['type'] !== 'string') return undefined;
  return { name, path, text, json, isList };
}

/**
 * The primary config: `preferred` (its `.conf`/`.conflist` twin when it was converted) if set, else the first
 * file that parses, as containerd picks it. Undefined when there is none yet.
 */
export function findPrimary(dir: string, preferred?: string): ConfFile | undefined {
  if (preferred !== undefined) {
    const stem = preferred.replace(/\.(conf|conflist|json)$/, '');
    for (const name of [preferred, `${stem}.conflist`, `${stem}.conf`]) {
      const f = readConf(dir, name);
      if (f) return f;
    }
    return undefined;
  }
  for (const name of listConfNames(dir)) {
    const f = readConf(dir, name);
    if (f) return f;
  }
  return undefined;
}

export const isOurs = (plugin: unknown) => isObject(plugin) && plugin['type'] === PLUGIN_TYPE;

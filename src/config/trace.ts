import { ConfigError } from '../errors.js';
import { parseHostAddress, type Cidr } from '../model/cidr.js';
import { parseId, parsePort } from './values.js';

/** `meshcap trace` flags as commander hands them over (strings, or true for --json). */
export type TraceFlags = Readonly<Record<string, string | boolean | undefined>>;

export interface TraceOptions {
  readonly source: { readonly k: 'netns'; readonly path: string | undefined } | { readonly k: 'rules'; readonly file: string };
  readonly direction: 'outbound' | 'inbound';
  readonly proto: 'tcp' | 'udp';
  readonly dst: Cidr;
  readonly dport: number;
  readonly src: Cidr | undefined;
  readonly sport: number | undefined;
  readonly uid: number;
  readonly gid: number;
  readonly mark: number;
  readonly inIface: string | undefined;
  readonly outIface: string | undefined;
  readonly json: boolean;
  /** `--format dot|mermaid|svg`: draw the walk instead of printing it. */
  readonly picture: PictureFormat | undefined;
}

export const PICTURE_FORMATS = ['dot', 'mermaid', 'svg'] as const;
export type PictureFormat = (typeof PICTURE_FORMATS)[number];

const text = (flags: TraceFlags, name: string): string | undefined => {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
};
/** A flag's string value (the read side's commands share it). */
export { text as flagText };

function need<T>(flag: string, value: string | undefined, parse: (s: string) => { ok: true; value: T } | { ok: false; reason: string }): T | undefined {
  if (value === undefined) return undefined;
  const r = parse(value);
  if (!r.ok) throw new ConfigError(flag, value, r.reason);
  return r.value;
}

function parseAddress(flag: string, value: string | undefined): Cidr | undefined {
  return need(flag, value, (s) => (s.includes('/') ? { ok: false, reason: 'an address, not a CIDR' } : parseHostAddress(s)));
}

function parseMark(s: string): { ok: true; value: number } | { ok: false; reason: string } {
  const n = /^(0x[0-9a-fA-F]{1,8}|0|[1-9][0-9]*)$/.test(s) ? Number(s) : Number.NaN;
  return Number.isInteger(n) && n >= 0 && n <= 0xffffffff ? { ok: true, value: n } : { ok: false, reason: 'a mark must be 0-4294967295, decimal or 0x hex' };
}

function parseIface(s: string): { ok: true; value: string } | { ok: false; reason: string } {
  return /^[A-Za-z0-9_.@:-]{1,15}$/.test(s) ? { ok: true, value: s } : { ok: false, reason: 'an interface name is 1-15 letters, digits or _.@:-' };
}

export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new ConfigError(flag, value, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** Validates `meshcap trace` flags; every error names its flag and value (exit 2). */
export function loadTraceOptions(flags: TraceFlags): TraceOptions {
  const netns = text(flags, 'netns');
  const rules = text(flags, 'rules');
  if (netns !== undefined && rules !== undefined) throw new ConfigError('--rules', rules, 'cannot be combined with --netns: trace reads either a dump or live rules');
  if (rules === '') throw new ConfigError('--rules', rules, 'needs a file name, or - for stdin');
  const dstText = text(flags, 'dst');
  if (dstText === undefined) throw new ConfigError('--dst', undefined, 'is required (the destination address)');
  const dst = parseAddress('--dst', dstText) as Cidr;
  const dportText = text(flags, 'dport');
  if (dportText === undefined) throw new ConfigError('--dport', undefined, 'is required (the destination port)');
  const src = parseAddress('--src', text(flags, 'src'));
  if (src !== undefined && src.family !== dst.family) throw new ConfigError('--src', text(flags, 'src'), `is ${src.family} but --dst is ${dst.family}`);
  const format = text(flags, 'format');
  if (format !== undefined && flags['json'] === true) throw new ConfigError('--format', format, 'cannot be combined with --json: a picture or the JSON walk');
  return {
    source: rules !== undefined ? { k: 'rules', file: rules } : { k: 'netns', path: netns },
    direction: oneOf('--direction', text(flags, 'direction'), ['outbound', 'inbound'] as const, 'outbound'),
    proto: oneOf('--proto', text(flags, 'proto'), ['tcp', 'udp'] as const, 'tcp'),
    dst,
    dport: need('--dport', dportText, parsePort) as number,
    src,
    sport: need('--sport', text(flags, 'sport'), parsePort),
    uid: need('--uid', text(flags, 'uid'), parseId) ?? 0,
    gid: need('--gid', text(flags, 'gid'), parseId) ?? 0,
    mark: need('--mark', text(flags, 'mark'), parseMark) ?? 0,
    inIface: need('--in-iface', text(flags, 'inIface'), parseIface),
    outIface: need('--out-iface', text(flags, 'outIface'), parseIface),
    json: flags['json'] === true,
    picture: format === undefined ? undefined : oneOf('--format', format, PICTURE_FORMATS, 'dot'),
  };
}

import type { Target } from '../model/rule.js';
import { parseMarkValue, type OptionItem } from './match-modules.js';
import { parseSavedAddress } from './rule-spec.js';
import type { InspectedTarget } from './types.js';

const FULL = 0xffffffff;
const single = (items: readonly OptionItem[], opt: string) => {
  const found = items.filter((i) => i.opt === opt);
  return found.length === 1 && !found[0]?.not ? found[0]?.values : undefined;
};
const onlyOptions = (items: readonly OptionItem[], allowed: readonly string[]) => items.every((i) => allowed.includes(i.opt) && !i.not);
const port = (s: string | undefined) => (s !== undefined && /^[0-9]+$/.test(s) ? Number(s) : undefined);

function parseMark(items: readonly OptionItem[]): Target | undefined {
  if (items.length !== 1) return undefined;
  const v = parseMarkValue(single(items, '--set-xmark')?.[0] ?? single(items, '--set-mark')?.[0]);
  return v === undefined ? undefined : { k: 'set-mark', mark: v.mark, ...(v.mask === undefined ? {} : { mask: v.mask }) };
}

function parseConnmark(items: readonly OptionItem[]): Target | undefined {
  const masks = ['--nfmask', '--ctmask', '--mask'];
  const fullMasks = items.filter((i) => masks.includes(i.opt)).every((i) => parseMarkValue(i.values[0])?.mark === FULL);
  for (const op of ['save', 'restore'] as const) {
    if (single(items, `--${op}-mark`) !== undefined && onlyOptions(items, [`--${op}-mark`, ...masks]) && fullMasks) return { k: 'connmark', op };
  }
  const x = parseMarkValue(single(items, '--set-xmark')?.[0]);
  return x !== undefined && items.length === 1 ? { k: 'connmark-set', mark: x.mark, mask: x.mask ?? FULL } : undefined;
}

function parseTproxy(items: readonly OptionItem[]): Target | undefined {
  const p = port(single(items, '--on-port')?.[0]);
  const ip = single(items, '--on-ip')?.[0];
  const m = parseMarkValue(single(items, '--tproxy-mark')?.[0]);
  if (p === undefined || m === undefined || !onlyOptions(items, ['--on-port', '--on-ip', '--tproxy-mark'])) return undefined;
  if (ip !== undefined && ip !== '0.0.0.0' && ip !== '::') return undefined;
  return { k: 'tproxy', mark: m.mark, mask: m.mask ?? FULL, port: p };
}

function parseKnown(name: string, items: readonly OptionItem[]): InspectedTarget | undefined {
  switch (name) {
    case 'ACCEPT':
    case 'DROP':
    case 'RETURN':
      return items.length === 0 ? { k: 'jump', chain: name } : undefined;
    case 'REJECT':
      return { k: 'reject' };
    case 'LOG':
    case 'NFLOG':
    case 'TRACE':
      return { k: 'observe', name };
    case 'MASQUERADE':
      return { k: 'masquerade' };
    case 'REDIRECT': {
      const p = port(single(items, '--to-ports')?.[0]);
      return p !== undefined && items.length === 1 ? { k: 'redirect', port: p, spelling: 'to-ports' } : undefined;
    }
    case 'MARK':
      return parseMark(items);
    case 'CONNMARK':
      return parseConnmark(items);
    case 'TPROXY':
      return parseTproxy(items);
    case 'CT': {
      const z = port(single(items, '--zone')?.[0]);
      return z !== undefined && items.length === 1 ? { k: 'ct-zone', zone: z } : undefined;
    }
    case 'SNAT': {
      const to = single(items, '--to-source')?.[0];
      const addr = to === undefined ? undefined : parseSavedAddress(to);
      return addr !== undefined && items.length === 1 ? { k: 'snat', to: addr } : undefined;
    }
    case 'DNAT':
      return parseDnat(single(items, '--to-destination')?.[0]);
    default:
      return undefined;
  }
}

/** `A`, `A:P`, `[A6]:P`, `:P`. */
function parseDnat(to: string | undefined): InspectedTarget | undefined {
  if (to === undefined) return undefined;
  const m = /^\[(.+)\](?::([0-9]+))?$/.exec(to) ?? /^([^:]*)(?::([0-9]+))?$/.exec(to) ?? /^(.+)$/.exec(to);
  if (m === null) return undefined;
  const addrText = m[1] ?? '';
  const addr = addrText === '' ? undefined : parseSavedAddress(addrText);
  if (addrText !== '' && addr === undefined) return undefined;
  return { k: 'dnat', addr, port: port(m[2]) };
}

/**
 * `-j NAME opts…` → a model target where the model has one (in its save spelling), else an extra target; a
 * user chain is a jump. Never fails: what it cannot read is `other`.
 */
export function parseTarget(name: string, items: readonly OptionItem[], tokens: readonly string[], chains?: ReadonlySet<string>): InspectedTarget {
  if (chains?.has(name)) return { k: 'jump', chain: name };
  const known = parseKnown(name, items);
  if (known !== undefined) return known;
  // Without the table's chain list, a bare name that is no target extension is a user chain.
  if (chains === undefined && items.length === 0 && !NO_OPTION_EXTENSIONS.has(name)) return { k: 'jump', chain: name };
  return { k: 'other', name, tokens };
}

const NO_OPTION_EXTENSIONS = new Set(['NOTRACK', 'AUDIT', 'CHECKSUM', 'CLASSIFY', 'SYNPROXY', 'NETMAP', 'QUEUE', 'NFQUEUE']);

type ExtensionTarget = Exclude<InspectedTarget['k'], 'jump' | 'goto' | 'observe' | 'other' | 'none'>;
const EXTENSION_NAMES: Record<ExtensionTarget, string> = {
  redirect: 'REDIRECT', 'set-mark': 'MARK', connmark: 'CONNMARK', 'connmark-set': 'CONNMARK', tproxy: 'TPROXY', snat: 'SNAT', 'ct-zone': 'CT', reject: 'REJECT', masquerade: 'MASQUERADE', dnat: 'DNAT', notrack: 'NOTRACK',
};

/** The name a rule's `-j` / `-g` gives: a chain, a verdict or a target extension; undefined without a target. */
export function targetName(t: InspectedTarget): string | undefined {
  switch (t.k) {
    case 'jump':
    case 'goto':
      return t.chain;
    case 'observe':
    case 'other':
      return t.name;
    case 'none':
      return undefined;
    default:
      return EXTENSION_NAMES[t.k];
  }
}

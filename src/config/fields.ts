import type { Parsed } from '../model/cidr.js';
import * as z from 'zod/mini';
import { parseEnum, parseGoBool, parsePath, parsePort } from './values.js';

/** Lifts a pure string parser into a zod schema whose failure message is the parser's reason. */
export function fromParser<T>(parse: (s: string) => Parsed<T>) {
  return z.pipe(
    z.string(),
    z.transform((s: string, ctx): T => {
      const r = parse(s);
      if (r.ok) return r.value;
      ctx.issues.push({ code: 'custom', message: r.reason, input: s });
      return z.NEVER;
    }),
  );
}

/** zod fields shared by every command's schema. */
export const bool = fromParser(parseGoBool);
export const port = fromParser(parsePort);
export const optionalPath = fromParser((s): Parsed<string | undefined> => (s === '' ? { ok: true, value: undefined } : parsePath(s)));
export const forceIptablesBinary = fromParser((s): Parsed<'legacy' | 'nft' | undefined> => (s === '' ? { ok: true, value: undefined } : parseEnum(['legacy', 'nft'] as const)(s)));
export const ipv6Mode = fromParser(parseEnum(['auto', 'on', 'off'] as const));
export const dryRunFormat = fromParser(parseEnum(['save', 'istio'] as const));
export const logFormat = fromParser(parseEnum(['json', 'pretty'] as const));

/** istio's `--log_output_level`: `scope:level,...` or a bare level; meshcap takes the `default` scope's level. */
const ISTIO_LEVELS = ['debug', 'info', 'warn', 'error', 'fatal', 'none'] as const;
export type IstioLevel = (typeof ISTIO_LEVELS)[number];
function parseLogLevels(s: string): Parsed<IstioLevel> {
  let level: IstioLevel = 'info';
  for (const item of s.split(',').filter((i) => i !== '')) {
    const [scope, lvl] = item.includes(':') ? item.split(':', 2) : ['default', item];
    if (!(ISTIO_LEVELS as readonly string[]).includes(lvl ?? '')) return { ok: false, reason: `level must be one of ${ISTIO_LEVELS.join(', ')}` };
    if (!/^[a-z0-9_-]+$/.test(scope ?? '')) return { ok: false, reason: 'scope must be lowercase letters, digits, "-" or "_"' };
    if (scope === 'default' || scope === 'all') level = lvl as IstioLevel;
  }
  return { ok: true, value: level };
}

export const logOutputLevel = fromParser(parseLogLevels);

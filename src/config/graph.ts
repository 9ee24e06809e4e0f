import { ConfigError } from '../errors.js';
import { flagText as text, oneOf, PICTURE_FORMATS, type PictureFormat, type TraceFlags } from './trace.js';

/** What `meshcap graph` draws: a dump, a namespace's live rules, or the plan of a mode's own flags. */
export type GraphSource = { readonly k: 'rules'; readonly file: string } | { readonly k: 'netns'; readonly path: string | undefined } | { readonly k: 'plan'; readonly argv: readonly string[] };

export interface GraphOptions {
  readonly source: GraphSource;
  readonly format: PictureFormat;
}

/** Validates `meshcap graph` flags; `argv` is what is left for a mode (`-p 15001 …`, `ambient …`). Errors name the flag and value (exit 2). */
export function loadGraphOptions(flags: TraceFlags, argv: readonly string[]): GraphOptions {
  const format = oneOf('--format', text(flags, 'format'), PICTURE_FORMATS, 'dot');
  const rules = text(flags, 'rules');
  const netns = text(flags, 'netns');
  if (netns !== undefined && rules !== undefined) throw new ConfigError('--rules', rules, 'cannot be combined with --netns: graph draws either a dump or live rules');
  if (rules === '') throw new ConfigError('--rules', rules, 'needs a file name, or - for stdin');
  const given = rules !== undefined ? (['--rules', rules] as const) : netns !== undefined ? (['--netns', netns] as const) : undefined;
  if (given !== undefined && argv.length > 0) throw new ConfigError(given[0], given[1], `cannot be combined with mode flags (${argv.join(' ')}): graph draws a dump, a namespace, or the plan of the flags`);
  if (rules !== undefined) return { source: { k: 'rules', file: rules }, format };
  return { source: argv.length > 0 ? { k: 'plan', argv } : { k: 'netns', path: netns }, format };
}

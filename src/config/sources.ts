import type * as z from 'zod/mini';
import { ConfigError } from '../errors.js';

/** One input of a command: a flag with its env vars (Istio's BindEnv), or an env var alone. */
export interface InputSpec<K extends string = string> {
  readonly key: K;
  /** Long flag name without dashes; absent for env-only inputs. */
  readonly long?: string;
  readonly short?: string;
  /** Primary env var (Istio: the long flag name upper-cased, "-" → "_"). */
  readonly env?: string;
  /** Alias env var that beats `env` but loses to the flag (Istio's AdditionalEnv). */
  readonly aliasEnv?: string;
  readonly kind: 'string' | 'bool';
  readonly default: string;
  /** Value placeholder in --help. */
  readonly arg?: string;
  readonly help: string;
}

export interface RawValue {
  readonly value: string;
  /** Where the value came from, as a user would name it: `--envoy-port`, `env INBOUND_CAPTURE_PORT`, `default`. */
  readonly source: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Picks each input's raw string with Istio's precedence: flag > alias env > env > default.
 * `flags` holds what the command line gave (undefined = not given; `true` = a bool flag without value).
 */
export function collectRaw<K extends string>(
  specs: readonly InputSpec<K>[],
  flags: Readonly<Record<string, string | boolean | undefined>>,
  env: Env,
): Record<K, RawValue> {
  const out = {} as Record<K, RawValue>;
  for (const spec of specs) {
    const flag = spec.long === undefined ? undefined : flags[spec.key];
    if (flag !== undefined) {
      out[spec.key] = { value: flag === true ? 'true' : String(flag), source: `--${spec.long}` };
    } else if (spec.aliasEnv !== undefined && env[spec.aliasEnv] !== undefined) {
      out[spec.key] = { value: env[spec.aliasEnv] ?? '', source: `env ${spec.aliasEnv}` };
    } else if (spec.env !== undefined && env[spec.env] !== undefined) {
      out[spec.key] = { value: env[spec.env] ?? '', source: `env ${spec.env}` };
    } else {
      out[spec.key] = { value: spec.default, source: `default of ${spec.long ? `--${spec.long}` : spec.env}` };
    }
  }
  return out;
}

/**
 * Validates the raw strings with `schema`. The first problem becomes a ConfigError that names the flag or
 * env var the bad value came from and the value itself.
 */
export function parseRaw<S extends z.ZodMiniType, K extends string>(schema: S, raw: Record<K, RawValue>): z.output<S> {
  const values = Object.fromEntries(Object.entries<RawValue>(raw).map(([k, v]) => [k, v.value]));
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = String(issue?.path[0] ?? '');
  const from = (raw as Record<string, RawValue | undefined>)[key];
  throw new ConfigError(from?.source ?? key, from?.value, issue?.message ?? 'invalid value');
}

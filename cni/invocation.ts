import type { Host } from '../src/config/host.js';
import { AnnotationError, CommandError, ConfigError, EnvironmentError, LockBusyError, MeshcapError } from '../src/errors.js';
import { createLogger, type LogSink, type Logger } from '../src/log.js';
import type { Runner } from '../src/exec/runner.js';
import type { NetConf } from '../src/node/plugin-config.js';
import type { CniEnv } from './env.js';
import { decidePodEnrollment, POD_ANNOTATIONS_CAPABILITY, type Enrollment } from '../src/node/enrollment.js';
import { CniCode, CniError, type CniVersion } from './spec.js';

/** What every CNI command shares: the plugin's dependencies, one call's context, errors, logging, the engine's options. */

export interface PluginDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdin: string;
  readonly host: Host;
  readonly stderr: LogSink;
  /** Runner for a namespace; `undefined` is the plugin's own (the node's). */
  readonly makeRunner: (netns: string | undefined) => Runner;
  /** Appends a log line to the configured log_file. */
  readonly appendLog?: (path: string, line: string) => void;
  /** Keeps an ADD's accepted config (stdin, the schema's output) for the fast path (cni/config-memo.ts). */
  readonly rememberConfig?: (stdin: string, conf: Readonly<Record<string, unknown>>) => void;
}

export interface PluginOutput {
  readonly stdout: string;
  readonly exitCode: number;
}

/** How long an ADD/DEL waits for another invocation working on the same namespace. */
export const LOCK_WAIT_MS = 30_000;

/** Turns an engine error into the CNI error the runtime shows, naming the config field or annotation. */
export function toCniError(err: unknown): CniError {
  if (err instanceof CniError) return err;
  if (err instanceof AnnotationError || err instanceof ConfigError) return new CniError(CniCode.invalidConfig, err.message);
  if (err instanceof CommandError) {
    const code = err.hint?.includes('xtables lock') ? CniCode.tryAgainLater : CniCode.applyFailed;
    return new CniError(code, err.message, err.stderr.trim() || undefined);
  }
  if (err instanceof LockBusyError) return new CniError(CniCode.tryAgainLater, err.message);
  if (err instanceof EnvironmentError || err instanceof MeshcapError) return new CniError(CniCode.environment, err.message);
  return new CniError(CniCode.internal, `internal error: ${err instanceof Error ? err.message : String(err)}`);
}

export interface Invocation {
  readonly env: CniEnv;
  readonly conf: NetConf & { cniVersion: CniVersion };
  readonly log: Logger;
  readonly deps: PluginDeps;
}

/** The enrollment decision for this invocation (throws only for a status annotation that is not JSON). */
export function enrollment(env: CniEnv, conf: NetConf): Enrollment {
  return decidePodEnrollment(conf, {
    namespace: env.args.get('K8S_POD_NAMESPACE') ?? '',
    name: env.args.get('K8S_POD_NAME') ?? '',
    annotations: conf.runtimeConfig?.[POD_ANNOTATIONS_CAPABILITY],
  });
}

export function makeLogger(conf: Pick<NetConf, 'log_file' | 'log_level'>, deps: PluginDeps): Logger {
  const file = conf.log_file;
  const sink: LogSink = {
    write(chunk: string) {
      deps.stderr.write(chunk);
      if (file !== undefined) deps.appendLog?.(file, chunk);
    },
  };
  return createLogger({ level: conf.log_level, format: 'json', sink, name: 'meshcap-cni' });
}


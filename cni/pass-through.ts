import { decidePodEnrollment, POD_ANNOTATIONS_CAPABILITY } from '../src/node/enrollment.js';
import type { NetConf } from '../src/node/plugin-config.js';
import { entryText, memoDir, recall } from './config-memo.js';
import { parseCniEnv } from './env.js';
import { convertResult, isObject, print, type CniVersion } from './spec.js';

/**
 * The plugin's fast path: an ADD that passes the pod through untouched, answered before the handler's graph
 * (zod's schemas, pino, the engine) is loaded. It only ever accepts: the network's entry must be one the
 * full path has already validated (cni/config-memo.ts), the per-call parts must be of the shapes the schema
 * takes as they are, and the decision must be a pass-through without warnings. Anything else — an error
 * to report, an enrolled pod, a warning, a memo missing — returns undefined and the full path
 * (cni/handler.ts) runs, as it always did. Its answer is the full path's, byte for byte (stdout, the one log
 * line in pino's format, the exit code): test/unit/cni/pass-through.test.ts and test/unit/cli/cni-front.test.ts hold the two side by side.
 */

export interface FastOutput {
  readonly stdout: string;
  /** The decision's log line ('' when the config's log_level hides info). */
  readonly log: string;
  readonly logFile: string | undefined;
}

/** A record the schema returns as it came: an object whose own keys are ordinary names (zod rebuilds records key by key). */
const plainRecord = (v: unknown): v is Record<string, unknown> => isObject(v) && !Object.prototype.hasOwnProperty.call(v, '__proto__');

/** Per-call fields in the shapes the schema passes through unchanged; undefined when any is not. */
function perCall(json: Record<string, unknown>): Pick<NetConf, 'prevResult' | 'runtimeConfig' | 'args'> | undefined {
  const { prevResult, runtimeConfig, args } = json;
  if (json['cni.dev/valid-attachments'] !== undefined || !plainRecord(prevResult)) return undefined;
  if (args !== undefined && !plainRecord(args)) return undefined;
  if (runtimeConfig === undefined) return { prevResult, ...(args === undefined ? {} : { args }) };
  if (!isObject(runtimeConfig)) return undefined;
  const ann = runtimeConfig[POD_ANNOTATIONS_CAPABILITY];
  if (ann !== undefined && ann !== null && !(plainRecord(ann) && Object.values(ann).every((a) => typeof a === 'string'))) return undefined;
  return { prevResult, runtimeConfig: runtimeConfig as NetConf['runtimeConfig'], ...(args === undefined ? {} : { args }) };
}

/** Printable ASCII: where pino's string writer and JSON.stringify agree character for character. */
const PLAIN = /^[\x20-\x7e]*$/;

/** pino's line for the pass-through decision, as the full path's child logger writes it (src/log.ts). */
export function passThroughLine(containerId: string, reason: string, now: Date): string {
  return `{"level":30,"time":${JSON.stringify(now.toISOString())},"command":"ADD","container":${JSON.stringify(containerId)},"reason":${JSON.stringify(reason)},"msg":"pod passes through untouched"}\n`;
}

export function tryPassThrough(env: Readonly<Record<string, string | undefined>>, stdin: string): FastOutput | undefined {
  if (env['CNI_COMMAND'] !== 'ADD') return undefined;
  const dir = memoDir(env);
  if (dir === undefined) return undefined;
  try {
    const json: unknown = JSON.parse(stdin);
    if (!isObject(json)) return undefined;
    const entry = recall(dir, entryText(json));
    const call = entry === undefined ? undefined : perCall(json);
    if (entry === undefined || call === undefined) return undefined;
    const conf = { ...entry, ...call } as NetConf & { cniVersion: CniVersion };
    const cni = parseCniEnv(env);
    const decision = decidePodEnrollment(conf, {
      namespace: cni.args.get('K8S_POD_NAMESPACE') ?? '',
      name: cni.args.get('K8S_POD_NAME') ?? '',
      annotations: conf.runtimeConfig?.[POD_ANNOTATIONS_CAPABILITY],
    });
    if (decision.enrolled || decision.warnings.length > 0 || !PLAIN.test(cni.containerId) || !PLAIN.test(decision.reason)) return undefined;
    const shown = conf.log_level === 'debug' || conf.log_level === 'info';
    return {
      stdout: print(convertResult({ cniVersion: conf.cniVersion, ...conf.prevResult }, conf.cniVersion)),
      log: shown ? passThroughLine(cni.containerId, decision.reason, new Date()) : '',
      logFile: conf.log_file,
    };
  } catch {
    return undefined;
  }
}

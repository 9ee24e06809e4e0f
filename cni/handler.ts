import type { Logger } from '../src/log.js';
import type { Enrollment } from '../src/node/enrollment.js';
import { hasRelativeLogFile } from '../src/node/plugin-config.js';
import { parseNetConf } from './config.js';
import { parseCniEnv } from './env.js';
import { enrollment, makeLogger, toCniError, type Invocation, type PluginDeps, type PluginOutput } from './invocation.js';
import { CniCode, CniError, convertResult, LATEST, print, versionReply } from './spec.js';

export type { PluginDeps, PluginOutput } from './invocation.js';

/**
 * The plugin's dispatcher. It holds only what every invocation needs — the CNI environment and config, the
 * logger, the enrollment decision, the result — and loads the engine's side (cni/pod-commands.ts, DEL's
 * cni/delete.ts) only when there is work for it: a pass-through ADD never evaluates it.
 */

/** Logs the decision once, with its reason, and each warning. */
function logDecision(log: Logger, e: Enrollment): void {
  for (const w of e.warnings) log.warn({ reason: w }, 'annotation ignored');
  if (e.enrolled) log.info({ reason: e.reason }, 'pod enrolled');
  else log.info({ reason: e.reason }, 'pod passes through untouched');
}

async function add(inv: Invocation): Promise<string> {
  const { conf, env, log } = inv;
  if (conf.prevResult === undefined) {
    throw new CniError(CniCode.invalidConfig, 'no prevResult: meshcap-cni must be chained after a plugin that sets up the interface');
  }
  const prev = { cniVersion: conf.cniVersion, ...conf.prevResult };
  const decision = enrollment(env, conf);
  logDecision(log, decision);
  if (decision.enrolled) await (await import('./pod-commands.js')).applyEnrolled(inv, decision);
  return print(convertResult(prev, conf.cniVersion));
}

/** One CNI invocation: env + stdin → stdout + exit code. Logs never reach stdout. */
export async function handlePlugin(deps: PluginDeps): Promise<PluginOutput> {
  let version: string = LATEST;
  try {
    const env = parseCniEnv(deps.env);
    if (env.command === 'VERSION') return { stdout: versionReply(deps.stdin), exitCode: 0 };
    if (env.command === 'DEL') return await (await import('./delete.js')).handleDel(env, deps);
    const conf = parseNetConf(deps.stdin);
    version = conf.cniVersion;
    if (hasRelativeLogFile(conf)) throw new CniError(CniCode.invalidConfig, `invalid config field "log_file": must be an absolute path`);
    // An accepted entry lets the next pass-through skip this validation (cni/pass-through.ts).
    if (env.command === 'ADD') deps.rememberConfig?.(deps.stdin, conf);
    const inv: Invocation = { env, conf, log: makeLogger(conf, deps).child({ command: env.command, container: env.containerId || undefined }), deps };
    try {
      if (env.command === 'ADD') return { stdout: await add(inv), exitCode: 0 };
      const commands = await import('./pod-commands.js');
      const handlers = { CHECK: commands.check, STATUS: commands.status, GC: commands.gc } as const;
      return { stdout: await handlers[env.command](inv), exitCode: 0 };
    } catch (err) {
      const e = toCniError(err);
      inv.log.error({ code: e.code, details: e.details }, e.message);
      throw e;
    }
  } catch (err) {
    return { stdout: print(toCniError(err).toJSON(version)), exitCode: 1 };
  }
}

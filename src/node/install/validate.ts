import type { Host } from '../../config/host.js';
import { ConfigError } from '../../errors.js';
import { loadCommand } from '../../commands/load.js';
import { hasRelativeLogFile, netConfSchema } from '../plugin-config.js';
import { ambientOptions, finish, hostOptions, originOf, sidecarOptions, type PluginOptions } from '../options.js';
import { isObject, PLUGIN_TYPE, type Json } from './conf-dir.js';

/** Keys the runtime fills in at every call; an installer-written entry must not carry them. */
const RUNTIME_KEYS = ['cniVersion', 'name', 'prevResult', 'runtimeConfig', 'cni.dev/valid-attachments'];
const FIELD = '--plugin-config';

const fieldError = (key: string, value: unknown, why: string) => new ConfigError(`${FIELD} field ${key}`, JSON.stringify(value)?.slice(0, 80) ?? 'undefined', why);

function loadOrName(opts: PluginOptions, host: Host): void {
  try {
    loadCommand(opts.command, opts.flags, {}, host);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const where = originOf(opts, err.field).replace(/^config field /, '');
    throw new ConfigError(`${FIELD} field ${where}`, err.value, err.message.replace(/^invalid [^:]*: /, ''));
  }
}

/**
 * Checks the plugin config the installer will write with the plugin's own schema and option validation,
 * so a value meshcap-cni would refuse at ADD is refused here (exit 2, naming the field) and nothing is written.
 */
export function validatePluginConfig(raw: unknown, host: Host): Json {
  if (!isObject(raw)) throw new ConfigError(FIELD, JSON.stringify(raw)?.slice(0, 80), 'must be a JSON object of meshcap-cni config fields');
  for (const key of RUNTIME_KEYS) if (key in raw) throw fieldError(key, raw[key], 'set by the runtime (from the primary config), not by the installer');
  if ('type' in raw && raw['type'] !== PLUGIN_TYPE) throw fieldError('type', raw['type'], `must be "${PLUGIN_TYPE}" or left out`);
  const r = netConfSchema.safeParse({ cniVersion: '1.0.0', ...raw, type: PLUGIN_TYPE });
  if (!r.success) {
    const issue = r.error.issues[0];
    if (issue?.code === 'unrecognized_keys') {
      const key = issue.keys[0] ?? '';
      // A nested object (bypass_policy) names its path too.
      if (issue.path.length > 0) throw fieldError([...issue.path, key].join('.'), undefined, 'unknown field');
      throw fieldError(key, raw[key], 'unknown field');
    }
    const key = issue?.path.join('.') ?? '';
    throw fieldError(key, raw[key], issue?.message ?? 'invalid');
  }
  const conf = r.data;
  if (hasRelativeLogFile(conf)) throw fieldError('log_file', conf.log_file ?? '', 'must be an absolute path');
  // IPv6 "auto" is decided per pod at ADD; here only the values are checked.
  const checked = { ...conf, ipv6: conf.ipv6 === 'auto' ? ('off' as const) : conf.ipv6 };
  const pod = conf.mode === 'sidecar' ? sidecarOptions(checked, {}) : ambientOptions(checked, {});
  loadOrName(finish(pod, conf.mode, checked, undefined), host);
  if (conf.mode === 'ambient' && conf.probe_ipset) loadOrName(finish(hostOptions(checked), 'ambient-host', checked, undefined), host);
  const { type: _t, ...fields } = raw;
  return fields;
}

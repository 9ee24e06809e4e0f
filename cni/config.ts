import { netConfSchema, type NetConf } from '../src/node/plugin-config.js';
import { CniCode, CniError, isSupported, type CniVersion } from './spec.js';

/** stdin → NetConf, with the spec's error codes: 6 not JSON, 2 unknown field, 7 bad value, 1 bad version. */
export function parseNetConf(stdin: string): NetConf & { cniVersion: CniVersion } {
  let json: unknown;
  try {
    json = JSON.parse(stdin);
  } catch (err) {
    throw new CniError(CniCode.decodeFailure, `network configuration on stdin is not JSON: ${(err as Error).message}`);
  }
  const r = netConfSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    if (issue?.code === 'unrecognized_keys') {
      const key = issue.keys[0] ?? '';
      if (issue.path.length > 0) throw new CniError(CniCode.unsupportedField, `unknown config field "${[...issue.path, key].join('.')}"`);
      const value = JSON.stringify((json as Record<string, unknown>)[key]);
      throw new CniError(CniCode.unsupportedField, `unknown config field "${key}"=${value?.slice(0, 80)}`);
    }
    const field = issue?.path.join('.') || 'config';
    throw new CniError(CniCode.invalidConfig, `invalid config field "${field}": ${issue?.message ?? 'invalid'}`);
  }
  const conf = r.data;
  if (!isSupported(conf.cniVersion)) {
    throw new CniError(CniCode.incompatibleVersion, `cniVersion ${JSON.stringify(conf.cniVersion)} is not supported`, 'supported: 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0');
  }
  return conf as NetConf & { cniVersion: CniVersion };
}

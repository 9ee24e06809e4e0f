import { isDeepStrictEqual } from 'node:util';
import { POD_ANNOTATIONS_CAPABILITY } from '../enrollment.js';
import { isObject, isOurs, PLUGIN_TYPE, type ConfFile, type Json } from './conf-dir.js';

/**
 * What the installer writes, as pure functions of the primary config: our entry last in its plugins
 * (replacing an earlier one of ours, never two), every other plugin and key kept as it was; a `.conf` turned
 * into a list with the `.conf`'s own cniVersion and name. Serialized with 2-space indents and a newline.
 */

/** Our conflist entry: `type` first, the plugin config, and the pod-annotations capability. */
export function buildEntry(pluginConfig: Json): Json {
  const capabilities = isObject(pluginConfig['capabilities']) ? pluginConfig['capabilities'] : {};
  return { type: PLUGIN_TYPE, ...pluginConfig, capabilities: { ...capabilities, [POD_ANNOTATIONS_CAPABILITY]: true } };
}

export const serialize = (json: Json) => `${JSON.stringify(json, null, 2)}\n`;

/** The list a primary becomes with our entry last: its name (`X.conflist` for a `X.conf`) and content. */
export function withEntry(primary: ConfFile, entry: Json): { name: string; json: Json } {
  if (primary.isList) {
    const plugins = (primary.json['plugins'] as unknown[]).filter((p) => !isOurs(p));
    return { name: primary.name, json: { ...primary.json, plugins: [...plugins, entry] } };
  }
  const { cniVersion, name, ...plugin } = primary.json;
  const list: Json = {};
  if (cniVersion !== undefined) list['cniVersion'] = cniVersion;
  if (name !== undefined) list['name'] = name;
  list['plugins'] = [plugin, entry];
  return { name: primary.name.replace(/\.(conf|json)$/, '.conflist'), json: list };
}

/** The list without our entries; undefined when it holds none (nothing to change). */
export function withoutEntry(file: ConfFile): Json | undefined {
  if (!file.isList) return undefined;
  const plugins = file.json['plugins'] as unknown[];
  if (!plugins.some(isOurs)) return undefined;
  return { ...file.json, plugins: plugins.filter((p) => !isOurs(p)) };
}

/** Whether a primary already holds exactly `entry`, as its last plugin and only once. */
export function hasEntry(primary: ConfFile, entry: Json): boolean {
  if (!primary.isList) return false;
  const plugins = primary.json['plugins'] as unknown[];
  return plugins.filter(isOurs).length === 1 && isDeepStrictEqual(plugins[plugins.length - 1], entry);
}

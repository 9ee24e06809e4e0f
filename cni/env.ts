import { parseInterface, parsePath } from '../src/config/values.js';
import { CniCode, CniError } from './spec.js';

/** The CNI_* environment of one invocation, validated. */
export interface CniEnv {
  readonly command: 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'STATUS' | 'GC';
  readonly containerId: string;
  readonly netns: string | undefined;
  readonly ifname: string;
  readonly args: ReadonlyMap<string, string>;
}

const COMMANDS = ['ADD', 'DEL', 'CHECK', 'VERSION', 'STATUS', 'GC'] as const;
const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const KNOWN_ARGS = new Set(['IgnoreUnknown', 'K8S_POD_NAME', 'K8S_POD_NAMESPACE', 'K8S_POD_INFRA_CONTAINER_ID', 'K8S_POD_UID']);

const envError = (name: string, value: string | undefined, why: string) =>
  new CniError(CniCode.invalidEnv, `invalid ${name}${value === undefined ? '' : `=${JSON.stringify(value)}`}: ${why}`);

/** `K=V;K=V`; unknown keys are an error unless IgnoreUnknown is set (as libcni). */
export function parseCniArgs(raw: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of raw.split(';').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw envError('CNI_ARGS', raw, `"${pair}" is not KEY=VALUE`);
    out.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  const ignore = ['1', 'true', 'True'].includes(out.get('IgnoreUnknown') ?? '');
  for (const key of out.keys()) if (!KNOWN_ARGS.has(key) && !ignore) throw envError('CNI_ARGS', raw, `unknown key ${key} (set IgnoreUnknown=1)`);
  return out;
}

/** Reads and checks the CNI_* variables each command needs (spec §2). */
export function parseCniEnv(env: Readonly<Record<string, string | undefined>>): CniEnv {
  const command = env['CNI_COMMAND'];
  if (command === undefined || command === '') throw envError('CNI_COMMAND', command, 'required');
  if (!(COMMANDS as readonly string[]).includes(command)) throw envError('CNI_COMMAND', command, `must be one of ${COMMANDS.join(', ')}`);
  const cmd = command as CniEnv['command'];
  const needs = cmd === 'ADD' || cmd === 'CHECK' || cmd === 'DEL';
  const containerId = env['CNI_CONTAINERID'] ?? '';
  const ifname = env['CNI_IFNAME'] ?? '';
  const netns = env['CNI_NETNS'] || undefined;
  if (needs) {
    if (!CONTAINER_ID.test(containerId)) throw envError('CNI_CONTAINERID', containerId, 'must start with a letter or digit and hold only letters, digits, "_", "." and "-"');
    const iface = parseInterface(ifname);
    if (!iface.ok) throw envError('CNI_IFNAME', ifname, iface.reason);
    if (cmd !== 'DEL' && netns === undefined) throw envError('CNI_NETNS', undefined, `required for ${cmd}`);
    if (netns !== undefined && !parsePath(netns).ok) throw envError('CNI_NETNS', netns, 'must be an absolute path');
  }
  return { command: cmd, containerId, netns, ifname, args: needs ? parseCniArgs(env['CNI_ARGS'] ?? '') : new Map() };
}

import { execa } from 'execa';
import { entryCommand } from './paths.js';
import type { Netns } from './netns.js';

/** Runs the built meshcap (the same bundle users run) against a namespace. */
export function meshcapIn(ns: Netns, args: readonly string[], env: Record<string, string> = {}) {
  const { file, args: pre } = entryCommand();
  return execa(file, [...pre, ...args, '--netns', ns.path], { reject: false, env });
}

/** `iptables-save` (or ip6tables) of a backend inside a namespace, without the `#` lines. */
export async function saveOf(ns: Netns, family: 'ipv4' | 'ipv6', backend: 'nft' | 'legacy'): Promise<string> {
  const cmd = `${family === 'ipv4' ? 'iptables' : 'ip6tables'}-${backend}-save`;
  const { stdout } = await ns.run(cmd, []);
  return stdout
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .join('\n');
}

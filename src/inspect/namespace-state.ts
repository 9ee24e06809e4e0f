import { CommandError } from '../errors.js';
import type { Runner } from '../exec/runner.js';
import { readListeners, type Listener } from './listeners.js';
import { namespaceInode, readNamespaceProcesses, type ProcessInfo } from './processes.js';
import { readNamespaceRules, type NamespaceRules } from './namespace-rules.js';
import { readRouting, type Routing } from './routing.js';

/** Everything precheck reads from a namespace. */
export interface NamespaceState {
  readonly rules: NamespaceRules;
  readonly listeners: readonly Listener[];
  readonly processes: readonly ProcessInfo[];
  readonly routing: Routing;
}

/**
 * Reads a namespace without changing it: rules of every backend, listeners, routing (through `runner`, which
 * runs its commands inside the namespace), then the processes whose /proc/<pid>/ns/net is `netnsPath`'s
 * namespace — after the commands, so none of ours is counted; meshcap itself is left out.
 */
export async function readNamespaceState(runner: Runner, netnsPath: string): Promise<NamespaceState> {
  // Rules first: when no backend can be read, that is the error to report (not a later `ip` failure).
  const rules = await readNamespaceRules(runner, { families: ['ipv4', 'ipv6'], nftTables: true, nftRules: true });
  if (rules.iptables.length === 0 && rules.unreadable.some((u) => u.startsWith('nft:'))) {
    throw new CommandError({ command: 'iptables-save (legacy and nft) and nft list ruleset', exitCode: undefined, stderr: rules.unreadable.join('; '), hint: 'install iptables and nftables, and run with NET_ADMIN in the namespace' });
  }
  const [listeners, routing] = await Promise.all([readListeners(runner), readRouting(runner)]);
  const processes = readNamespaceProcesses(namespaceInode(netnsPath), [process.pid]);
  return { rules, listeners, routing, processes };
}

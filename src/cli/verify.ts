import { existsSync } from 'node:fs';
import { ConfigError, EnvironmentError, ExitCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { Family } from '../model/rule.js';
import { formatDriftJson, formatDriftLines, isEqual, mergeDrift, type Drift } from '../analyze/drift.js';
import type { Runner } from '../exec/runner.js';
import type { CommandName, Loaded } from '../commands/load.js';
import type { CliDeps } from './run.js';

/**
 * `--verify`: compares the namespace with what this config installs (our chains and rules, our rules in
 * builtin chains, ip rules, routes, addresses) and changes nothing, taking no lock. Exit 0 when it holds
 * exactly that, 1 when it differs (one `missing: …` / `unexpected: …` line per difference). With
 * --native-nftables it compares our nft tables with the save-format listing (and names Istio's iptables
 * chains found next to them).
 */
export async function runVerify(command: CommandName, loaded: Loaded, json: boolean, log: Logger, deps: CliDeps): Promise<number> {
  const { settings } = loaded;
  if (settings.dryRun) throw new ConfigError('--verify', 'true', 'cannot be combined with --dry-run (-n): verify reads the namespace');
  if (settings.cleanupOnly) throw new ConfigError('--verify', 'true', 'cannot be combined with --cleanup-only: verify changes nothing');
  const { netns } = settings;
  if (netns !== undefined && !existsSync(netns)) throw new EnvironmentError(`network namespace ${netns} does not exist (--netns)`);
  const [{ checkLoaded }, { createSpawnRunner }, { legacyHintFromProc }] = await Promise.all([import('../exec/engine.js'), import('../exec/spawn-runner.js'), import('../exec/detect.js')]);
  const runner = (deps.makeRunner ?? createSpawnRunner)(netns);
  const legacyHint = (family: Family) => legacyHintFromProc(family, netns === undefined, (p) => deps.host.readText(p));
  const rulesDrift = await checkLoaded(runner, loaded, { reconcile: false, forceApply: false, forcedBackend: settings.forceIptablesBinary, legacyHint });
  const drift = loaded.nft === undefined && command !== 'ambient-host' ? mergeDrift(rulesDrift, await readNativeNextToIptables(runner, command)) : rulesDrift;
  const equal = isEqual(drift);
  log.info({ equal, missing: drift.missing.length, unexpected: drift.unexpected.length }, 'verified');
  if (json) deps.stdout.write(formatDriftJson(drift));
  else if (!equal) deps.stdout.write(`${formatDriftLines(drift).join('\n')}\n`);
  return equal ? ExitCode.ok : ExitCode.findings;
}

/** iptables mode: native tables of the same mode next to our rules are a difference (nft absent: none). */
async function readNativeNextToIptables(runner: Runner, mode: 'sidecar' | 'ambient'): Promise<Drift> {
  const [{ readNamespaceRules }, { nativeTablesNextToIptables }, { ownedNftTables }] = await Promise.all([import('../inspect/namespace-rules.js'), import('../analyze/nft-drift.js'), import('../model/nft/layout.js')]);
  const { nftTables } = await readNamespaceRules(runner, { families: [], nftTables: true });
  return nativeTablesNextToIptables(nftTables, ownedNftTables(mode));
}

import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { loadGraphOptions, type GraphSource } from '../config/graph.js';
import { detectLayout } from '../inspect/capture-layout.js';
import type { ParsedTable } from '../inspect/types.js';
import { buildRuleGraph } from '../graph/build.js';
import { drawGraph } from '../graph/draw.js';
import { renderSaveDryRun } from '../render/save.js';
import { loadCommand } from '../commands/load.js';
import type { GraphFlags } from './graph-command.js';
import { isModeCommand } from './program.js';
import { parseArgv, type CliDeps } from './run.js';
import { buildPurposeLookup, type PlanPurposes } from './trace-purposes.js';
import { makeLiveRunner, parseDump, readDumpTables, readLiveTables } from './trace-sources.js';

/** The tables to draw, and the plan they came from (its rules name their purposes exactly). */
interface Drawn {
  readonly tables: readonly ParsedTable[];
  readonly own: readonly PlanPurposes[];
}

/** A mode's own flags → its plan → the text its save-format dry-run prints → the same tables a dump of it gives. */
async function readPlanTables(argv: readonly string[], deps: CliDeps): Promise<Drawn | undefined> {
  const parsed = parseArgv(argv, deps);
  if (parsed === undefined) return undefined;
  if (!isModeCommand(parsed)) throw new ConfigError('mode flags', argv.join(' '), 'must be a mode\'s flags (sidecar flags, ambient …, ambient-host …), not another command');
  if (parsed.check.verify) throw new ConfigError('--verify', 'true', 'compares a namespace; graph draws the plan of the flags');
  const { settings, plan, nft } = loadCommand(parsed.command, parsed.flags, deps.env, deps.host);
  if (settings.cleanupOnly) throw new ConfigError('--cleanup-only', 'true', 'leaves no rules to draw');
  const text = nft === undefined ? renderSaveDryRun(plan) : (await import('../render/nft-dry-run.js')).nftDryRunTexts(plan, nft, false).save();
  return { tables: parseDump(text, ['mode flags', argv.join(' ')]).tables, own: [{ plan, nft }] };
}

async function readTables(source: GraphSource, deps: CliDeps & { readonly stdin?: () => string }): Promise<Drawn | undefined> {
  switch (source.k) {
    case 'rules':
      return { tables: readDumpTables(source.file, deps.stdin ?? (() => readFileSync(0, 'utf8'))).tables, own: [] };
    case 'netns': {
      const { byFamily } = await readLiveTables(await makeLiveRunner(source.path, deps), ['ipv4', 'ipv6']);
      return { tables: [...byFamily.values()].flatMap((l) => [...l.iptables, ...l.native]), own: [] };
    }
    case 'plan':
      return readPlanTables(source.argv, deps);
  }
}

/** `meshcap graph`: the rules drawn as DOT, Mermaid or SVG on stdout. Exit 0; 2 bad input; 5 no such namespace; 4 no `*-save` works. */
export async function runGraph(parsed: GraphFlags, deps: CliDeps & { readonly stdin?: () => string }): Promise<void> {
  const o = loadGraphOptions(parsed.flags, parsed.argv);
  const drawn = await readTables(o.source, deps);
  if (drawn === undefined) return;
  const layout = detectLayout(drawn.tables) === 'sidecar' ? 'sidecar' : 'ambient';
  deps.stdout.write(await drawGraph(buildRuleGraph(drawn.tables, buildPurposeLookup(layout, drawn.own)), o.format));
}

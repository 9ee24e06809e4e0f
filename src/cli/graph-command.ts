import { Command, Option } from 'commander';
import type { TraceFlags } from '../config/trace.js';

/** `meshcap graph` flags as commander hands them over, and the words left for a mode (`-p 15001 …`, `ambient …`). */
export interface GraphFlags {
  readonly flags: TraceFlags;
  readonly argv: readonly string[];
}

/**
 * Adds the `graph` subcommand. Its own options are read wherever they stand; every other word is a mode's
 * (sidecar flags, `ambient …`, `ambient-host …`), parsed later by the same program the modes use.
 */
export function addGraphCommand(program: Command, docsText: string, onChosen: (flags: GraphFlags) => void): void {
  const cmd = program
    .command('graph')
    .description('draw the rules as a directed graph: hooks and chains, jumps, verdicts (dot, mermaid or svg)')
    .usage('[--rules FILE | --netns PATH | MODE FLAGS…] [--format dot|mermaid|svg]')
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption('-h, --help', 'show this help')
    .addHelpText('after', docsText);
  cmd.addOption(new Option('--rules <file>', 'draw an iptables-save / nft list ruleset dump (text or -j JSON; - = stdin)'));
  cmd.addOption(new Option('--netns <path>', 'draw the live rules of this network namespace (default without a source: the current one)'));
  cmd.addOption(new Option('--format <format>', 'dot (default), mermaid (a flowchart for Markdown) or svg (rendered in-process)'));
  cmd.action(() => onChosen({ flags: cmd.opts<Record<string, string | boolean | undefined>>(), argv: [...cmd.args] }));
}

import { Command, Option } from 'commander';
import type { TraceFlags } from '../config/trace.js';

/** `meshcap trace …` options; the values are validated by config/trace.ts. */
const TRACE_OPTIONS: readonly [string, string][] = [
  ['--netns <path>', 'trace the live rules of this network namespace (default: the current one)'],
  ['--rules <file>', 'trace an iptables-save / ip6tables-save dump instead (- = stdin)'],
  ['--dst <ip>', 'destination address (its family picks the rules)'],
  ['--dport <port>', 'destination port'],
  ['--direction <dir>', 'outbound (default: a local process connects) or inbound (arrives on --in-iface)'],
  ['--proto <proto>', 'tcp (default) or udp'],
  ['--src <ip>', 'source address (default: the route\'s source outbound; none a rule names inbound)'],
  ['--sport <port>', 'source port'],
  ['--uid <n>', 'sending socket owner uid (outbound, default 0)'],
  ['--gid <n>', 'sending socket owner gid (outbound, default 0)'],
  ['--mark <n>', 'socket mark, SO_MARK (outbound, default 0)'],
  ['--in-iface <name>', 'arriving device (inbound, default eth0)'],
  ['--out-iface <name>', 'leaving device (outbound; default: the route in --netns, lo/eth0 with --rules)'],
];

/** Adds the `trace` subcommand; `onChosen` receives its raw flag values. */
export function addTraceCommand(program: Command, docsText: string, onChosen: (flags: TraceFlags) => void): void {
  const cmd = program
    .command('trace')
    .description('walk a new connection through the rules as the kernel does, and say where it lands')
    .allowExcessArguments(false)
    .helpOption('-h, --help', 'show this help')
    .addHelpText('after', docsText);
  for (const [flags, help] of TRACE_OPTIONS) cmd.addOption(new Option(flags, help));
  cmd.addOption(new Option('--json', 'print one JSON object'));
  cmd.addOption(new Option('--format <format>', 'draw the walk on the rules\' graph instead: dot, mermaid or svg'));
  cmd.action(() => onChosen(cmd.opts<Record<string, string | boolean | undefined>>()));
}

/** `--verify` and `--json` on the apply commands. */
export function addVerifyOptions(cmd: Command): () => { verify: boolean; json: boolean } {
  cmd.addOption(new Option('--verify', 'compare the namespace with what this config installs; change nothing (exit 0 equal, 1 differs)'));
  cmd.addOption(new Option('--json', 'with --verify: print {"equal", "missing", "unexpected"}'));
  return () => {
    const o = cmd.opts<Record<string, unknown>>();
    return { verify: o['verify'] === true, json: o['json'] === true };
  };
}

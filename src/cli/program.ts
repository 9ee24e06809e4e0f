import { Command, Option } from 'commander';
import type { InputSpec } from '../config/sources.js';
import { IGNORED_ISTIO_LOG_FLAGS, SIDECAR_INPUTS } from '../config/sidecar-inputs.js';
import { AMBIENT_HOST_INPUTS, AMBIENT_INPUTS } from '../config/ambient-inputs.js';
import type { FlagValues } from '../config/sidecar.js';
import { VERSION } from '../version.js';
import type { TraceFlags } from '../config/trace.js';
import { addTraceCommand, addVerifyOptions } from './trace-command.js';
import { addGraphCommand, type GraphFlags } from './graph-command.js';
import { addCheckCommands, type CheckCommand } from './checks.js';

import type { CommandName } from '../commands/load.js';

export type ParsedCommand =
  | { readonly command: CommandName; readonly flags: FlagValues; readonly check: { readonly verify: boolean; readonly json: boolean } }
  | { readonly command: 'trace'; readonly flags: TraceFlags }
  | ({ readonly command: 'graph' } & GraphFlags)
  | CheckCommand;

/** A rule-installing mode's command line (sidecar, ambient, ambient-host), as opposed to trace, graph and the checks. */
export type ModeCommand = Extract<ParsedCommand, { readonly check: unknown }>;
export const isModeCommand = (p: ParsedCommand | undefined): p is ModeCommand => p !== undefined && 'check' in p;

function toOption(spec: InputSpec): Option {
  const names = `${spec.short ? `-${spec.short}, ` : ''}--${spec.long}`;
  const env = [spec.aliasEnv, spec.env].filter(Boolean).join(', ');
  const shownDefault = spec.help.includes('default') ? [] : [`default ${JSON.stringify(spec.default)}`];
  const notes = [...shownDefault, ...(env ? [`env ${env}`] : [])];
  const help = notes.length > 0 ? `${spec.help} (${notes.join('; ')})` : spec.help;
  // Bool flags take an optional value like Go's pflag: --dry-run, --dry-run=true, --dry-run=false.
  return new Option(spec.kind === 'bool' ? `${names} [bool]` : `${names} <${spec.arg ?? 'value'}>`, help);
}

/** Adds a command's inputs as options; returns a reader of the values given on the command line. */
function addInputs(cmd: Command, specs: readonly InputSpec[]): () => FlagValues {
  const options = new Map<string, Option>();
  for (const spec of specs) {
    if (spec.long === undefined) continue;
    const option = toOption(spec);
    options.set(spec.key, option);
    cmd.addOption(option);
  }
  return () => {
    const opts = cmd.opts<Record<string, string | boolean | undefined>>();
    return Object.fromEntries([...options].map(([key, option]) => [key, opts[option.attributeName()]]));
  };
}

/** The docs page of each command (under docs/ in meshcap's repository). */
const DOCS: Record<CommandName, string> = { sidecar: 'sidecar', ambient: 'ambient', 'ambient-host': 'ambient' };

function docsLine(page: string): string {
  return `\nDocumentation: docs/${page}.md in the meshcap repository (exit codes: README.md).\n`;
}

/**
 * The command line: `meshcap [sidecar flags]`, `meshcap ambient …`, `meshcap ambient-host …`. Parsing never
 * exits: commander's errors come back as thrown CommanderErrors and help text goes to `write`.
 */
export function buildProgram(write: { out: (s: string) => void; err: (s: string) => void }): { parse: (argv: readonly string[]) => ParsedCommand | undefined } {
  let chosen: ParsedCommand | undefined;
  const program = new Command('meshcap')
    .description("Install a service mesh's traffic-capture rules in a pod network namespace (istio-iptables compatible).")
    .exitOverride()
    .configureOutput({ writeOut: write.out, writeErr: write.err, outputError: () => undefined })
    .allowExcessArguments(false)
    .enablePositionalOptions()
    .helpOption('-h, --help', 'show this help')
    .version(`meshcap ${VERSION}`, '-V, --version', 'print the version')
    .addHelpText('after', docsLine('sidecar'));
  const readSidecar = addInputs(program, SIDECAR_INPUTS);
  const readCheck = addVerifyOptions(program);
  for (const name of IGNORED_ISTIO_LOG_FLAGS) program.addOption(new Option(`--${name} [value]`).hideHelp());
  program.action(() => {
    chosen = { command: 'sidecar', flags: readSidecar(), check: readCheck() };
  });

  const sub = (name: string, command: CommandName, description: string, specs: readonly InputSpec[]) => {
    const cmd = program.command(name).description(description).allowExcessArguments(false).helpOption('-h, --help', 'show this help').addHelpText('after', docsLine(DOCS[command]));
    const read = addInputs(cmd, specs);
    const check = addVerifyOptions(cmd);
    if (command === 'sidecar') for (const flag of IGNORED_ISTIO_LOG_FLAGS) cmd.addOption(new Option(`--${flag} [value]`).hideHelp());
    cmd.action(() => {
      chosen = { command, flags: read(), check: check() };
    });
  };
  // `pilot-agent istio-iptables …` spelled as `meshcap istio-iptables …`: the same sidecar mode.
  sub('istio-iptables', 'sidecar', 'sidecar mode under its Istio name (as `pilot-agent istio-iptables`)', SIDECAR_INPUTS);
  sub('ambient', 'ambient', "Istio ambient's in-pod redirection to ztunnel (run against the pod's namespace)", AMBIENT_INPUTS);
  // Parsed by src/cli/install-cni.ts (run.ts hands it over before this parser runs); listed here for --help.
  program.command('install-cni').description("install meshcap-cni into the node's CNI chain and keep it there (docs/cni-node.md)").helpOption(false).allowUnknownOption();
  // The node agent's door (src/agent/, chosen by src/main.ts before this parser runs); listed here for --help.
  program.command('node-agent').description('install-cni, plus a sweep that keeps every enrolled pod on the node captured; metrics (docs/cni-node.md)').helpOption(false).allowUnknownOption();
  program.command('node-status').description("every pod sandbox of the node with its capture state, read through the CRI (docs/cni-node.md)").helpOption(false).allowUnknownOption();
  sub('ambient-host', 'ambient-host', "Istio ambient's node-side kubelet probe SNAT rules and ipsets (run against the node's namespace)", AMBIENT_HOST_INPUTS);
  addTraceCommand(program, docsLine('trace-and-verify'), (flags) => {
    chosen = { command: 'trace', flags };
  });
  addGraphCommand(program, docsLine('trace-and-verify'), (g) => {
    chosen = { command: 'graph', ...g };
  });
  addCheckCommands(program, (c) => {
    chosen = c;
  });

  return {
    parse(argv) {
      chosen = undefined;
      program.parse([...argv], { from: 'user' });
      return chosen;
    },
  };
}

import { Command, Option } from 'commander';
import type { InputSpec } from '../config/sources.js';
import { IGNORED_ISTIO_LOG_FLAGS, SIDECAR_INPUTS } from '../config/sidecar-inputs.js';
import type { FlagValues } from '../config/sidecar.js';

export interface ParsedCommand {
  readonly command: 'sidecar' | 'help';
  readonly flags: FlagValues;
}

function toOption(spec: InputSpec): Option {
  const names = `${spec.short ? `-${spec.short}, ` : ''}--${spec.long}`;
  const env = [spec.aliasEnv, spec.env].filter(Boolean).join(', ');
  const shownDefault = spec.help.includes('default') ? [] : [`default ${JSON.stringify(spec.default)}`];
  const notes = [...shownDefault, ...(env ? [`env ${env}`] : [])];
  const help = notes.length > 0 ? `${spec.help} (${notes.join('; ')})` : spec.help;
  // Bool flags take an optional value like Go's pflag: --dry-run, --dry-run=true, --dry-run=false.
  return new Option(spec.kind === 'bool' ? `${names} [bool]` : `${names} <${spec.arg ?? 'value'}>`, help);
}

/**
 * The command line (options only; no actions). Parsing never exits: commander's errors come back as thrown
 * CommanderErrors and help text goes to `write`.
 */
export function buildProgram(write: { out: (s: string) => void; err: (s: string) => void }): { program: Command; readFlags: () => FlagValues } {
  const program = new Command('meshcap')
    .description('Install a service mesh\'s traffic-capture rules in a pod network namespace (istio-iptables compatible).')
    .exitOverride()
    .configureOutput({ writeOut: write.out, writeErr: write.err, outputError: () => undefined })
    .allowExcessArguments(false)
    .helpOption('-h, --help', 'show this help');
  const options = new Map<string, Option>();
  for (const spec of SIDECAR_INPUTS) {
    if (!('long' in spec) || spec.long === undefined) continue;
    const option = toOption(spec);
    options.set(spec.key, option);
    program.addOption(option);
  }
  for (const name of IGNORED_ISTIO_LOG_FLAGS) program.addOption(new Option(`--${name} [value]`).hideHelp());
  const readFlags = (): FlagValues => {
    const opts = program.opts<Record<string, string | boolean | undefined>>();
    return Object.fromEntries([...options].map(([key, option]) => [key, opts[option.attributeName()]]));
  };
  return { program, readFlags };
}

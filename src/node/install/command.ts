import { readFileSync, statSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import type { Host } from '../../config/host.js';
import { ConfigError, EnvironmentError, ExitCode } from '../../errors.js';
import type { LogSink, Logger } from '../../log.js';
import { Installer } from './installer.js';
import { validatePluginConfig } from './validate.js';
import type { Json } from './conf-dir.js';

/**
 * What `meshcap install-cni` and `meshcap node-agent` share: the installer's flags, their checks, and the
 * one-shot actions (--uninstall, --check, --once). Each door adds its own flags and its own long-running part.
 */

export interface InstallFlags {
  cniConfDir: string;
  cniBinDir: string;
  confName?: string;
  pluginConfig?: string;
  pluginBinary?: string;
  once?: boolean;
  uninstall?: boolean;
  check?: boolean;
  recheckInterval: string;
  logFormat: 'json' | 'pretty';
}

export interface InstallDeps {
  readonly host: Host;
  readonly stdout: LogSink;
  readonly stderr: LogSink;
  /** The running program when it is the self-contained executable (the binary to install), else undefined. */
  readonly selfExecutable: string | undefined;
}

/** A command named `name` with the installer's flags, its output to `deps`, and commander's errors thrown. */
export function installCommand(name: string, description: string, deps: Pick<InstallDeps, 'stdout' | 'stderr'>): Command {
  return new Command(name)
    .description(description)
    .exitOverride()
    .configureOutput({ writeOut: (s) => deps.stdout.write(s), writeErr: (s) => deps.stderr.write(s), outputError: () => undefined })
    .allowExcessArguments(false)
    .helpOption('-h, --help', 'show this help')
    .option('--cni-conf-dir <dir>', 'the CNI conf dir (the host dir, mounted)', '/etc/cni/net.d')
    .option('--cni-bin-dir <dir>', 'the CNI bin dir (the host dir, mounted)', '/opt/cni/bin')
    .option('--conf-name <file>', 'the primary config to chain into (default: the first that parses, as containerd picks it)')
    .option('--plugin-config <json|@file>', "meshcap-cni's config fields, as JSON or @file")
    .option('--plugin-binary <path>', 'the executable to install as meshcap-cni (default: this executable; required under the Node build)')
    .option('--once', 'install once and exit (exit 5 when there is no primary config)')
    .option('--uninstall', 'remove our entry and the binary, then exit (idempotent)')
    .option('--check', 'exit 0 when the entry and binary are in place, 5 otherwise (readiness probe)')
    .option('--recheck-interval <seconds>', 'periodic re-check besides the directory watch', '5')
    .addOption(new Option('--log-format <format>', 'log format').choices(['json', 'pretty']).default('json'))
    .addHelpText('after', '\nDocumentation: docs/cni-node.md in the meshcap repository.\n');
}

/** Parses argv; undefined for --help; a bad flag is a ConfigError (exit 2) naming the command line. */
export function parseCommand<T>(cmd: Command, argv: readonly string[]): T | undefined {
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return undefined;
      throw new ConfigError('command line', `${cmd.name().replace(/^meshcap /, '')} ${argv.join(' ')}`, err.message.replace(/^error: /, ''));
    }
    throw err;
  }
  return cmd.opts<T & object>();
}

function readPluginConfig(value: string | undefined, host: Host): Json {
  if (value === undefined) return validatePluginConfig({}, host);
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (err) {
      throw new ConfigError('--plugin-config', value, `cannot read the file: ${(err as Error).message}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError('--plugin-config', value.slice(0, 80), `not JSON: ${(err as Error).message}`);
  }
  return validatePluginConfig(json, host);
}

function requireDir(path: string, flag: string): void {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new EnvironmentError(`${flag} ${path} is not a directory (mount the host's dir there)`);
}

/** Seconds (a number in (0, max]) → milliseconds; else a ConfigError naming the flag. */
export function parseSeconds(flag: string, v: string, max = 3600): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > max) throw new ConfigError(flag, v, `must be a number of seconds between 0 and ${max}`);
  return n * 1000;
}

/** Checks the dirs and the plugin config (nothing is written before this passed) and makes the installer. */
export function createInstaller(flags: InstallFlags, deps: InstallDeps, log: Logger): Installer {
  requireDir(flags.cniConfDir, '--cni-conf-dir');
  requireDir(flags.cniBinDir, '--cni-bin-dir');
  const pluginConfig = readPluginConfig(flags.pluginConfig, deps.host);
  const removing = flags.uninstall === true || flags.check === true;
  const pluginBinary = flags.pluginBinary ?? deps.selfExecutable;
  if (pluginBinary === undefined && !removing) throw new ConfigError('--plugin-binary', undefined, 'required under the Node build (the running program is not the self-contained executable)');
  return new Installer({ confDir: flags.cniConfDir, binDir: flags.cniBinDir, confName: flags.confName, pluginConfig, pluginBinary: removing ? undefined : pluginBinary, log });
}

/** --uninstall, --check, --once: the exit code; undefined when the command goes on running. */
export function runOneShot(flags: InstallFlags, installer: Installer): number | undefined {
  if (flags.uninstall) {
    installer.uninstall();
    return ExitCode.ok;
  }
  if (flags.check) {
    const r = installer.inPlace(flags.pluginConfig === undefined);
    if (!r.ok) throw new EnvironmentError(`not ready: ${r.why}`);
    return ExitCode.ok;
  }
  if (flags.once) {
    if (installer.install() === 'no-primary') throw new EnvironmentError(`no primary CNI config in ${flags.cniConfDir} (no .conf, .conflist or .json file that parses)`);
    return ExitCode.ok;
  }
  return undefined;
}

/**
 * Runs `fn` until SIGTERM/SIGINT (or `signal`, for tests): the abort it gets fires on the first of them,
 * logged with `message`. The handlers are taken off again when `fn` ends.
 */
export async function runUntilSignalled(log: Logger, message: string, signal: AbortSignal | undefined, fn: (stop: AbortSignal) => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    log.info({ signal: sig }, message);
    stop.abort(sig);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  signal?.addEventListener('abort', () => stop.abort('deps'), { once: true });
  try {
    await fn(stop.signal);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

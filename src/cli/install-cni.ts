import { readFileSync, statSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import type { Host } from '../config/host.js';
import { ConfigError, EnvironmentError, ExitCode, MeshcapError } from '../errors.js';
import { createLogger, type LogSink, type Logger } from '../log.js';
import { Installer } from '../node/install/installer.js';
import { validatePluginConfig } from '../node/install/validate.js';

/**
 * `meshcap install-cni`: the DaemonSet's long-running installer (docs/cni-node.md). Argv (after the
 * subcommand) → exit code; never exits the process itself.
 */

export interface InstallCniDeps {
  readonly host: Host;
  readonly stdout: LogSink;
  readonly stderr: LogSink;
  /** The running program when it is the self-contained executable (the binary to install), else undefined. */
  readonly selfExecutable: string | undefined;
  /** Ends the watch (tests); SIGTERM/SIGINT do it in production. */
  readonly signal?: AbortSignal;
}

interface Flags {
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

function parseFlags(argv: readonly string[], deps: InstallCniDeps): Flags | undefined {
  const cmd = new Command('meshcap install-cni')
    .description("Install meshcap-cni into the node's CNI chain and keep it there (the DaemonSet's container)")
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
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return undefined;
      throw new ConfigError('command line', `install-cni ${argv.join(' ')}`, err.message.replace(/^error: /, ''));
    }
    throw err;
  }
  return cmd.opts<Flags>();
}

function readPluginConfig(value: string | undefined, host: Host): Record<string, unknown> {
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

function parseInterval(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 3600) throw new ConfigError('--recheck-interval', v, 'must be a number of seconds between 0 and 3600');
  return n * 1000;
}

/** Runs until SIGTERM/SIGINT (or deps.signal), then takes the entry and the binary out. */
async function watchUntilSignalled(installer: Installer, recheckMs: number, log: Logger, deps: InstallCniDeps): Promise<void> {
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    log.info({ signal: sig }, 'stopping: removing meshcap-cni from the chain');
    stop.abort(sig);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  deps.signal?.addEventListener('abort', () => stop.abort('deps'), { once: true });
  try {
    await installer.watch(stop.signal, recheckMs);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  // An upgrade's installer that started meanwhile owns the entry and the binary now: leave them to it.
  if (installer.owns()) installer.uninstall();
  else log.info({}, 'handed over to a newer installer: entry and binary left in place');
}

export async function runInstallCni(argv: readonly string[], deps: InstallCniDeps): Promise<number> {
  let log: Logger | undefined;
  try {
    const flags = parseFlags(argv, deps);
    if (flags === undefined) return ExitCode.ok;
    log = createLogger({ level: 'info', format: flags.logFormat, sink: deps.stderr, name: 'meshcap-install-cni' });
    const recheckMs = parseInterval(flags.recheckInterval);
    requireDir(flags.cniConfDir, '--cni-conf-dir');
    requireDir(flags.cniBinDir, '--cni-bin-dir');
    const pluginConfig = readPluginConfig(flags.pluginConfig, deps.host);
    const removing = flags.uninstall === true || flags.check === true;
    const pluginBinary = flags.pluginBinary ?? deps.selfExecutable;
    if (pluginBinary === undefined && !removing) throw new ConfigError('--plugin-binary', undefined, 'required under the Node build (the running program is not the self-contained executable)');
    const installer = new Installer({ confDir: flags.cniConfDir, binDir: flags.cniBinDir, confName: flags.confName, pluginConfig, pluginBinary: removing ? undefined : pluginBinary, log });
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
    await watchUntilSignalled(installer, recheckMs, log, deps);
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof MeshcapError) {
      if (log) log.error({ code: err.code }, err.message);
      else deps.stderr.write(`meshcap install-cni: ${err.message}\n`);
      return err.exitCode;
    }
    deps.stderr.write(`meshcap install-cni: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return ExitCode.bug;
  }
}

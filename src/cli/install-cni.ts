import { ExitCode, MeshcapError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { createInstaller, installCommand, parseCommand, parseSeconds, runOneShot, runUntilSignalled, type InstallDeps, type InstallFlags } from '../node/install/command.js';
import type { Installer } from '../node/install/installer.js';

/**
 * `meshcap install-cni`: the long-running installer (docs/cni-node.md). Argv (after the subcommand) → exit
 * code; never exits the process itself. On SIGTERM/SIGINT it takes the entry and the binary out (fail open;
 * `meshcap node-agent` is the fail-closed DaemonSet process).
 */

export interface InstallCniDeps extends InstallDeps {
  /** Ends the watch (tests); SIGTERM/SIGINT do it in production. */
  readonly signal?: AbortSignal;
}

/** Runs until SIGTERM/SIGINT (or deps.signal), then takes the entry and the binary out. */
async function watchUntilSignalled(installer: Installer, recheckMs: number, log: Logger, deps: InstallCniDeps): Promise<void> {
  await runUntilSignalled(log, 'stopping: removing meshcap-cni from the chain', deps.signal, (stop) => installer.watch(stop, recheckMs));
  // An upgrade's installer that started meanwhile owns the entry and the binary now: leave them to it.
  if (installer.owns()) installer.uninstall();
  else log.info({}, 'handed over to a newer installer: entry and binary left in place');
}

export async function runInstallCni(argv: readonly string[], deps: InstallCniDeps): Promise<number> {
  let log: Logger | undefined;
  try {
    const cmd = installCommand('meshcap install-cni', "Install meshcap-cni into the node's CNI chain and keep it there (the DaemonSet's container)", deps);
    const flags = parseCommand<InstallFlags>(cmd, argv);
    if (flags === undefined) return ExitCode.ok;
    log = createLogger({ level: 'info', format: flags.logFormat, sink: deps.stderr, name: 'meshcap-install-cni' });
    const recheckMs = parseSeconds('--recheck-interval', flags.recheckInterval);
    const installer = createInstaller(flags, deps, log);
    const done = runOneShot(flags, installer);
    if (done !== undefined) return done;
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

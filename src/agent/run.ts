import type { Host } from '../config/host.js';
import { ExitCode, MeshcapError } from '../errors.js';
import { createLogger, type LogSink } from '../log.js';
import { selfExecutable } from '../node/self-executable.js';
import type { Runner } from '../exec/runner.js';
import { runNodeAgent } from './node-agent.js';
import { runNodeStatus } from './node-status.js';

/** The node agent's door: `meshcap node-agent …` and `meshcap node-status …` → exit code (never exits the process). */

export interface AgentDeps {
  readonly host: Host;
  readonly stdout: LogSink;
  readonly stderr: LogSink;
  readonly signal?: AbortSignal;
  readonly makeRunner?: (netns: string | undefined) => Runner;
}

export const AGENT_COMMANDS = ['node-agent', 'node-status'] as const;

export async function runAgentCommand(argv: readonly string[], deps: AgentDeps): Promise<number> {
  const [command, ...rest] = argv;
  const name = `meshcap-${command ?? 'node-agent'}`;
  const log = (format: 'json' | 'pretty') => createLogger({ level: 'info', format, sink: deps.stderr, name });
  try {
    if (command === 'node-status') return await runNodeStatus(rest, deps, log);
    return await runNodeAgent(rest, { ...deps, selfExecutable: selfExecutable() }, log);
  } catch (err) {
    if (err instanceof MeshcapError) {
      deps.stderr.write(`meshcap ${command}: ${err.message}\n`);
      return err.exitCode;
    }
    deps.stderr.write(`meshcap ${command}: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return ExitCode.bug;
  }
}

import { Command, Option } from 'commander';
import { EnvironmentError, ExitCode } from '../errors.js';
import { createSpawnRunner } from '../exec/spawn-runner.js';
import type { Host } from '../config/host.js';
import type { LogSink, Logger } from '../log.js';
import type { Runner } from '../exec/runner.js';
import { parseCommand } from '../node/install/command.js';
import { readInstalledEntry } from '../node/install/installed-entry.js';
import type { PodReport } from './pod-check.js';
import { sweepNode } from './sweep.js';
import { DEFAULT_CRI_SOCKET } from './node-agent.js';

/**
 * `meshcap node-status`: every sandbox of the node with its capture state, from the plugin config in our
 * entry of the node's conflist and the CRI — read only (the sweep of the agent with `--repair false`).
 * Exit 0 when no enrolled pod is bypassing or drifted, 1 otherwise, 2 bad flags, 5 no CRI socket or no entry.
 */

export interface NodeStatusDeps {
  readonly host: Host;
  readonly stdout: LogSink;
  readonly stderr: LogSink;
  readonly makeRunner?: (netns: string | undefined) => Runner;
}

interface StatusFlags {
  criSocket: string;
  cniConfDir: string;
  json?: boolean;
  logFormat: 'json' | 'pretty';
}

function formatTable(pods: readonly PodReport[]): string {
  const rows = [['NAMESPACE', 'NAME', 'SANDBOX', 'STATE', 'REASON'], ...pods.map((p) => [p.namespace, p.name, p.id.slice(0, 13), p.state, p.reason])];
  const widths = rows[0]?.slice(0, -1).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return `${rows.map((r) => r.map((c, i) => (i < widths.length ? c.padEnd(widths[i] ?? 0) : c)).join('  ')).join('\n')}\n`;
}

const order = (p: PodReport) => `${p.namespace}/${p.name}/${p.id}`;

export async function runNodeStatus(argv: readonly string[], deps: NodeStatusDeps, log: (format: 'json' | 'pretty') => Logger): Promise<number> {
  const cmd = new Command('meshcap node-status')
    .description("Every pod sandbox of the node with its capture state (read only): captured, bypassing, drifted, not-enrolled, error")
    .exitOverride()
    .configureOutput({ writeOut: (s) => deps.stdout.write(s), writeErr: (s) => deps.stderr.write(s), outputError: () => undefined })
    .allowExcessArguments(false)
    .helpOption('-h, --help', 'show this help')
    .option('--cri-socket <path>', "the container runtime's CRI socket", DEFAULT_CRI_SOCKET)
    .option('--cni-conf-dir <dir>', 'the CNI conf dir holding our entry', '/etc/cni/net.d')
    .option('--json', 'one JSON document: {"pods":[{"namespace","name","id","state","reason"}]}')
    .addOption(new Option('--log-format <format>', 'log format').choices(['json', 'pretty']).default('json'))
    .addHelpText('after', '\nDocumentation: docs/cni-node.md in the meshcap repository (exit 0 all captured, 1 a pod bypassing or drifted, 2 bad flags, 5 no CRI socket or entry).\n');
  const flags = parseCommand<StatusFlags>(cmd, argv);
  if (flags === undefined) return ExitCode.ok;
  const entry = readInstalledEntry(flags.cniConfDir);
  if ('why' in entry) throw new EnvironmentError(`${entry.why} (--cni-conf-dir)`);
  const logger = log(flags.logFormat).child({ command: 'node-status' });
  const r = await sweepNode({ criSocket: flags.criSocket, conf: entry.conf, host: deps.host, makeRunner: deps.makeRunner ?? createSpawnRunner, log: logger, repair: false });
  const pods = [...r.pods].sort((a, b) => order(a).localeCompare(order(b)));
  if (flags.json) deps.stdout.write(`${JSON.stringify({ pods: pods.map(({ namespace, name, id, state, reason }) => ({ namespace, name, id, state, reason })) })}\n`);
  else deps.stdout.write(formatTable(pods));
  return pods.some((p) => p.state === 'bypassing' || p.state === 'drifted') ? ExitCode.findings : ExitCode.ok;
}

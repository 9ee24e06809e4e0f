import { Command, Option } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, EnvironmentError, ExitCode } from '../errors.js';
import type { Parsed } from '../model/cidr.js';
import { parseEnum, parseId, parsePath, parsePortList } from '../config/values.js';
import { reachesThreshold, type Finding, type Severity } from '../analyze/findings.js';
import { formatFindings, formatFindingsJson } from '../analyze/format.js';
import type { CliDeps } from './run.js';

/** `meshcap lint FILE...` and `meshcap precheck`: read-only checks that report findings. */

export type CheckName = 'lint' | 'precheck';

export interface CheckCommand {
  readonly command: CheckName;
  readonly flags: Readonly<Record<string, string | boolean | undefined>>;
  readonly files: readonly string[];
}

const FAIL_ON = ['error', 'warning', 'info'] as const;

function docs(page: string): string {
  return `\nDocumentation: docs/${page}.md in the meshcap repository.\n`;
}

/** Adds the check commands to the program; `choose` receives the parsed command. */
export function addCheckCommands(program: Command, choose: (c: CheckCommand) => void): void {
  const common = (cmd: Command) =>
    cmd
      .allowExcessArguments(false)
      .helpOption('-h, --help', 'show this help')
      .addOption(new Option('--proxy-uid <uid>', 'the proxy UID that capture exempts').default('1337'))
      .addOption(new Option('--proxy-gid <gid>', 'the proxy GID that capture exempts').default('1337'))
      .addOption(new Option('--fail-on <severity>', 'exit 1 when a finding is at or above: error, warning or info').default('warning'))
      .addOption(new Option('--json', 'print {"findings": [...]} instead of lines'))
      .addHelpText('after', docs('checks'));
  const lint = common(program.command('lint').description('check Kubernetes manifests (YAML or JSON, "-" = stdin) for mistakes that break traffic capture').argument('<file...>'))
    .addOption(new Option('--mode <mode>', 'sidecar or ambient').default('sidecar'))
    .addOption(new Option('--cni', 'capture rules come from the CNI plugin (no istio-init)'))
    .addOption(new Option('--native-sidecars <when>', 'auto (kubelet ≥ 1.29: yes), true or false').default('auto'))
    .addOption(new Option('--bypass-policy <json|@file>', "the CNI plugin's bypass_policy: denied annotations outside the allowed namespaces are findings"));
  lint.action((files: string[]) => choose({ command: 'lint', flags: lint.opts(), files }));
  const precheck = common(program.command('precheck').description("check a live pod network namespace (read only): capture rules, listeners, processes, routing"))
    .addOption(new Option('--netns <path>', 'the namespace: /proc/<pid>/ns/net or /run/netns/<name> (default: the current one)'))
    .addOption(new Option('--port <ports>', "the app's inbound ports (default: every listening port inbound capture covers)"));
  precheck.action(() => choose({ command: 'precheck', flags: precheck.opts(), files: [] }));
}

function flag<T>(flags: CheckCommand['flags'], name: string, parse: (s: string) => Parsed<T>): T {
  const raw = flags[name.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())];
  const text = raw === true ? 'true' : raw === undefined || raw === false ? '' : raw;
  const r = parse(text);
  if (!r.ok) throw new ConfigError(name, text, r.reason);
  return r.value;
}

function readManifest(file: string): { file: string; text: string } {
  try {
    return { file, text: readFileSync(file === '-' ? 0 : file, 'utf8') };
  } catch (err) {
    throw new ConfigError(`manifest ${file === '-' ? 'stdin' : file}`, undefined, (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message);
  }
}

function report(findings: readonly Finding[], json: boolean, failOn: Severity, origin: string, out: CliDeps['stdout']): number {
  out.write(json ? formatFindingsJson(findings) : formatFindings(findings, origin));
  return reachesThreshold(findings, failOn) ? ExitCode.findings : ExitCode.ok;
}

interface Common {
  readonly proxyUid: number;
  readonly proxyGid: number;
}

async function runPrecheck(cmd: CheckCommand, common: Common, deps: CliDeps): Promise<{ findings: Finding[]; origin: string }> {
  const given = cmd.flags['netns'];
  const netns = given === undefined ? undefined : flag(cmd.flags, '--netns', parsePath);
  const portsText = cmd.flags['port'];
  const ports = portsText === undefined ? undefined : flag(cmd.flags, '--port', parsePortList);
  if (netns !== undefined && !existsSync(netns)) throw new EnvironmentError(`network namespace ${netns} does not exist (--netns)`);
  const [{ readNamespaceState }, { analyzeNamespace }, { createSpawnRunner }] = await Promise.all([
    import('../inspect/namespace-state.js'),
    import('../analyze/precheck/precheck.js'),
    import('../exec/spawn-runner.js'),
  ]);
  const runner = (deps.makeRunner ?? createSpawnRunner)(netns);
  const state = await readNamespaceState(runner, netns ?? '/proc/self/ns/net');
  return { findings: analyzeNamespace(state, { ...common, ports }), origin: `netns ${netns ?? 'current'}` };
}

/** `--bypass-policy`: the policy as JSON, or `@FILE` holding it; parsed with the plugin's schema. */
async function readBypassPolicy(flags: CheckCommand['flags']) {
  const given = flags['bypassPolicy'];
  if (typeof given !== 'string') return undefined;
  const { parseBypassPolicy } = await import('../config/bypass-policy.js');
  let text = given;
  if (given.startsWith('@')) {
    try {
      text = readFileSync(given.slice(1), 'utf8');
    } catch (err) {
      throw new ConfigError('--bypass-policy', given, (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message);
    }
  }
  const r = parseBypassPolicy(text);
  if (!r.ok) throw new ConfigError('--bypass-policy', given.slice(0, 80), r.reason);
  return r.value;
}

async function runLint(cmd: CheckCommand, common: Common): Promise<Finding[]> {
  // The lint code (and the yaml parser) is loaded only when lint runs: the apply path never parses it.
  const [{ lintManifests }, { ManifestSyntaxError }] = await Promise.all([
    import('../analyze/lint/lint.js'),
    import('../analyze/lint/manifests.js'),
  ]);
  const mode = flag(cmd.flags, '--mode', parseEnum(['sidecar', 'ambient'] as const));
  const nativeSidecars = flag(cmd.flags, '--native-sidecars', parseEnum(['auto', 'true', 'false'] as const));
  const bypassPolicy = await readBypassPolicy(cmd.flags);
  const files = cmd.files.map(readManifest);
  try {
    return lintManifests(files, { ...common, mode, nativeSidecars, cni: cmd.flags['cni'] === true, ...(bypassPolicy === undefined ? {} : { bypassPolicy }) });
  } catch (err) {
    if (err instanceof ManifestSyntaxError) throw new ConfigError(`manifest ${err.file === '-' ? 'stdin' : err.file}`, undefined, `line ${err.line}: ${err.reason}`);
    throw err;
  }
}

/** Runs a check command; returns its exit code (0 clean, 1 a finding at or above --fail-on). */
export async function runCheck(cmd: CheckCommand, deps: CliDeps): Promise<number> {
  const failOn = flag(cmd.flags, '--fail-on', parseEnum(FAIL_ON));
  const json = cmd.flags['json'] === true;
  const common = { proxyUid: flag(cmd.flags, '--proxy-uid', parseId), proxyGid: flag(cmd.flags, '--proxy-gid', parseId) };
  if (cmd.command === 'lint') return report(await runLint(cmd, common), json, failOn, 'manifests', deps.stdout);
  const { findings, origin } = await runPrecheck(cmd, common, deps);
  return report(findings, json, failOn, origin, deps.stdout);
}

import { CommandError } from '../errors.js';
import type { Family } from '../model/rule.js';
import type { NamespaceProbe } from './native.js';
import { describeCommand, NOT_FOUND, type RunResult, type Runner } from './runner.js';

export type Backend = 'legacy' | 'nft' | 'plain';

/** The binaries of one family on one backend, and what the writes need. */
export interface Iptables {
  readonly family: Family;
  readonly backend: Backend;
  readonly save: string;
  readonly restore: string;
  /** Extra restore arguments: `--wait=30` on legacy ≥ 1.6.2, as Istio passes it. */
  readonly waitArgs: readonly string[];
  readonly reason: string;
  /** The family's current state, as `save` printed it during detection. */
  readonly state: string;
}

export function binaryName(family: Family, backend: Backend, tool: '' | 'save' | 'restore'): string {
  const base = family === 'ipv4' ? 'iptables' : 'ip6tables';
  return [base, backend === 'plain' ? '' : backend, tool].filter(Boolean).join('-');
}

/** `v1.8.9` out of a save header or `--version` line; `nf_tables` marks the nft flavour. */
export function parseVersion(text: string): number[] | undefined {
  const m = /v([0-9]+(?:\.[0-9]+)+)/.exec(text);
  return m?.[1]?.split('.').map(Number);
}

function atLeast(v: readonly number[], min: readonly number[]): boolean {
  for (let i = 0; i < min.length; i++) {
    const a = v[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** Istio's "existing rules" test: the save output has at least three lines. */
export const holdsRules = (save: string) => save.split('\n').length - 1 >= 3;

/** The backend Istio's rule picks from one family's two saves, with why and the chosen save's output. */
export interface BackendChoice {
  readonly backend: 'legacy' | 'nft';
  readonly reason: string;
  readonly state: string;
}

/**
 * Which backend holds a family's rules, decided once for the apply path and the read side: legacy when its
 * save works and holds rules, else nft when its save works; undefined when neither does (plain `iptables`).
 */
export function chooseBackend(legacy: RunResult | undefined, nft: RunResult | undefined): BackendChoice | undefined {
  if (legacy?.exitCode === 0 && holdsRules(legacy.stdout)) return { backend: 'legacy', reason: 'legacy tables already hold rules in this namespace', state: legacy.stdout };
  if (nft?.exitCode === 0) return { backend: 'nft', reason: legacy?.exitCode === 0 ? 'no legacy rules here; nf_tables works' : 'legacy iptables unusable; nf_tables works', state: nft.stdout };
  return undefined;
}

export function hintFor(result: RunResult, cmd: string): string | undefined {
  const err = result.stderr;
  // Kernel first: "Couldn't load match `owner':No such file or directory" is a missing module, not a binary.
  if (/Table does not exist|can't initialize|Could not fetch rule set|Protocol not supported|does not exist \(do you need to insmod|Couldn't load (match|target)|Extension \S+ revision 0 not supported/.test(err)) {
    return 'the kernel lacks this table or match (load the iptables/nf_tables modules)';
  }
  if (result.exitCode === NOT_FOUND || /command not found|failed to execute \S+: No such file or directory|: not found$/m.test(err)) return `${cmd} is not installed (install the iptables package)`;
  if (/xtables lock|Another app is currently holding/.test(err)) return 'the xtables lock is held by another process';
  if (/Permission denied|Operation not permitted/.test(err)) return 'meshcap needs NET_ADMIN (and NET_RAW) in the target namespace';
  return undefined;
}

async function waitArgsFor(runner: Runner, backend: Backend, family: Family, state: string): Promise<string[]> {
  if (backend !== 'legacy') return [];
  let version = parseVersion(state);
  if (version === undefined) version = parseVersion((await runner.run(binaryName(family, 'legacy', 'save'), ['--version'])).stdout);
  return version !== undefined && atLeast(version, [1, 6, 2]) ? ['--wait=30'] : [];
}

/** What /proc says about legacy tables without starting a process: none anywhere, none here, or unknown. */
export type LegacyHint = 'no-legacy-module' | 'no-legacy-tables' | 'unknown';

const TABLE_NAMES = { ipv4: '/proc/net/ip_tables_names', ipv6: '/proc/net/ip6_tables_names' } as const;

/**
 * Legacy tables of a namespace are listed in its /proc/net/ip{6}_tables_names (what iptables-legacy-save
 * reads): when the file is missing the legacy module is not loaded, so no namespace has legacy rules; in the
 * current namespace (no --netns) an empty file means none here. Either way the legacy save can be skipped.
 */
export function legacyHintFromProc(family: Family, currentNamespace: boolean, read: (path: string) => string | undefined): LegacyHint {
  return legacyHintFromNames(read(TABLE_NAMES[family]), currentNamespace);
}

/** The rule itself, over the file's text (undefined: no such file) and whether it is the target's own. */
function legacyHintFromNames(names: string | undefined, targetsOwn: boolean): LegacyHint {
  if (names === undefined) return 'no-legacy-module';
  return targetsOwn && names.trim() === '' ? 'no-legacy-tables' : 'unknown';
}

/**
 * Istio's legacy/nft choice (istio-sidecar.md §8), run in the target namespace: legacy if it already holds
 * rules there, else nft if it works, else plain `iptables`. The save that decides is also the current state,
 * so detection costs one or two `*-save` runs per family (one when /proc already shows there are no legacy
 * tables). Istio's extra `-A INPUT -p 255` kernel probe is left out: the restore itself fails with the same
 * error and is rolled back.
 */
export async function detectIptables(runner: Runner, family: Family, forced?: 'legacy' | 'nft', legacyHint: LegacyHint = 'unknown', nftEmpty = false): Promise<Iptables> {
  const make = async (backend: Backend, reason: string, state: string): Promise<Iptables> => ({
    family,
    backend,
    save: binaryName(family, backend, 'save'),
    restore: binaryName(family, backend, 'restore'),
    waitArgs: await waitArgsFor(runner, backend, family, state),
    reason,
    state,
  });
  const trySave = (backend: Backend) => runner.run(binaryName(family, backend, 'save'), []);
  // The namespace's nf_tables hold no table of this family (read over netlink): iptables-nft-save would
  // print nothing, so its empty state is known without running it.
  if (forced === 'nft' && nftEmpty) return make('nft', `--force-iptables-binary nft`, '');
  if (forced !== undefined) {
    const r = await trySave(forced);
    const cmd = binaryName(family, forced, 'save');
    if (r.exitCode !== 0) throw new CommandError({ command: cmd, exitCode: r.exitCode, stderr: r.stderr, hint: hintFor(r, cmd) });
    return make(forced, `--force-iptables-binary ${forced}`, r.stdout);
  }
  let nft: RunResult | undefined;
  if (legacyHint !== 'unknown') {
    if (nftEmpty) return make('nft', `${legacyHint === 'no-legacy-module' ? 'no legacy iptables module loaded' : 'no legacy tables in this namespace'}; nf_tables works`, '');
    nft = await trySave('nft');
    const why = legacyHint === 'no-legacy-module' ? 'no legacy iptables module loaded' : 'no legacy tables in this namespace';
    if (nft.exitCode === 0) return make('nft', `${why}; nf_tables works`, nft.stdout);
  }
  // Both saves at once (the nft one is needed whenever legacy holds no rules, the common case); an nft save
  // that already failed above is not run again.
  const [legacy, nftResult] = await Promise.all([trySave('legacy'), nft ?? trySave('nft')]);
  nft = nftResult;
  const choice = chooseBackend(legacy, nft);
  if (choice !== undefined) return make(choice.backend, choice.reason, choice.state);
  const plain = await trySave('plain');
  const cmd = binaryName(family, 'plain', 'save');
  if (plain.exitCode !== 0) {
    throw new CommandError({ command: describeCommand(cmd, []), exitCode: plain.exitCode, stderr: plain.stderr || nft.stderr, hint: hintFor(plain, cmd) });
  }
  return make('plain', 'neither legacy nor nft variants work; using plain iptables', plain.stdout);
}

/**
 * The hints a namespace probe gives one family: what the target's own /proc/net says about legacy tables
 * (legacyHintFromProc's rule, the probe read it from inside), and whether nf_tables holds no table of this
 * family at all.
 */
export function hintsFromProbe(probe: NamespaceProbe, family: Family): { legacy: LegacyHint; nftEmpty: boolean } {
  const nftFamily = family === 'ipv4' ? 'ip' : 'ip6';
  return { legacy: legacyHintFromNames(probe.legacyTables[family], true), nftEmpty: !probe.nftTables.some((t) => t.family === nftFamily) };
}

/** Detects one family's backend with the best hints there are: the probe's when it read the namespace. */
export function detectWithHints(runner: Runner, family: Family, probe: NamespaceProbe | undefined, forced: 'legacy' | 'nft' | undefined, fallback: LegacyHint | undefined): Promise<Iptables> {
  const hints = probe === undefined ? { legacy: fallback ?? 'unknown', nftEmpty: false } : hintsFromProbe(probe, family);
  return detectIptables(runner, family, forced, hints.legacy, hints.nftEmpty);
}

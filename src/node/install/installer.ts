import { existsSync, readFileSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { findPrimary, isOurs, listConfNames, PLUGIN_TYPE, readConf, type ConfFile, type Json } from './conf-dir.js';
import { buildEntry, hasEntry, serialize, withEntry, withoutEntry } from './entry.js';
import { installBinary, modeOf, writeAtomic } from './files.js';

/**
 * `meshcap install-cni`: keeps meshcap-cni installed on a node — the plugin binary in the CNI bin dir and our
 * entry last in the primary config (the file containerd loads) — and takes both out again on exit.
 */

export interface InstallerOptions {
  readonly confDir: string;
  readonly binDir: string;
  /** A fixed primary config name (`--conf-name`); else the first file that parses, as containerd picks it. */
  readonly confName: string | undefined;
  readonly pluginConfig: Json;
  /** The executable to install as meshcap-cni; undefined when only removing. */
  readonly pluginBinary: string | undefined;
  readonly log: Logger;
}

export type InstallResult = 'installed' | 'unchanged' | 'no-primary';

/** Names the installer that owns the node's installation (the newest one started): a dotfile in the bin dir. */
const OWNER_FILE = '.meshcap-cni.owner';

/** Repairs within this window that count as a fight with another writer, and how many make one. */
const FIGHT_WINDOW_MS = 60_000;
const FIGHT_REPAIRS = 5;

export class Installer {
  readonly entry: Json;
  private preferred: string | undefined;
  private lastPrimary: string | undefined;
  private readonly repairs: number[] = [];
  private binaryChecked = false;
  private readonly token = `${hostname()}/${process.pid}/${randomBytes(6).toString('hex')}`;

  constructor(private readonly opts: InstallerOptions) {
    this.entry = buildEntry(opts.pluginConfig);
    this.preferred = opts.confName;
  }

  get binaryPath(): string {
    return join(this.opts.binDir, PLUGIN_TYPE);
  }

  primary(): ConfFile | undefined {
    return findPrimary(this.opts.confDir, this.preferred);
  }

  /** The binary is there and the primary holds our entry last (the readiness probe's answer). */
  inPlace(anyConfig = false): { ok: boolean; why: string } {
    if (!existsSync(this.binaryPath)) return { ok: false, why: `${this.binaryPath} is missing` };
    const p = this.primary();
    if (p === undefined) return { ok: false, why: `no CNI config in ${this.opts.confDir}` };
    const last = p.isList ? (p.json['plugins'] as unknown[]).at(-1) : undefined;
    const ok = anyConfig ? isOurs(last) : hasEntry(p, this.entry);
    return ok ? { ok: true, why: `entry in place in ${p.path}` } : { ok: false, why: `no meshcap-cni entry (or not last, or another config) in ${p.path}` };
  }

  private get ownerPath(): string {
    return join(this.opts.binDir, OWNER_FILE);
  }

  /** Claims the installation: a newer installer (an upgrade's) takes it over from the running one. */
  claim(): void {
    writeAtomic(this.ownerPath, `${this.token}\n`, 0o644);
  }

  /** Whether this installer still owns the installation (no newer installer has claimed it). */
  owns(): boolean {
    try {
      return readFileSync(this.ownerPath, 'utf8').trim() === this.token;
    } catch {
      return false;
    }
  }

  /** One install round: binary, then the entry; writes nothing that is already right. */
  install(): InstallResult {
    const { log } = this.opts;
    // The first round compares contents (an upgrade replaces the binary); later rounds only put back a missing one.
    const binary = this.opts.pluginBinary;
    if (binary !== undefined && (!this.binaryChecked || !existsSync(this.binaryPath))) {
      if (installBinary(binary, this.binaryPath)) log.info({ path: this.binaryPath }, 'installed plugin binary');
      this.binaryChecked = true;
    }
    const primary = this.primary();
    if (primary === undefined) return 'no-primary';
    const preempted = this.lastPrimary !== undefined && this.lastPrimary !== primary.name;
    this.lastPrimary = primary.name;
    if (hasEntry(primary, this.entry)) return 'unchanged';
    const { name, json } = withEntry(primary, this.entry);
    const target = join(this.opts.confDir, name);
    writeAtomic(target, serialize(json), modeOf(primary.path) ?? 0o644);
    // A .conf became a list: the list is written first, then the .conf goes, so no reader sees a list in a .conf.
    if (name !== primary.name) {
      rmSync(primary.path, { force: true });
      if (this.preferred !== undefined) this.preferred = name;
    }
    this.lastPrimary = name;
    log.info({ file: target, from: primary.name, reason: preempted ? `${primary.name} now sorts first` : `no meshcap-cni entry last in ${primary.name}` }, 'inserted meshcap-cni entry');
    return 'installed';
  }

  /** Removes our entry from every list in the conf dir (atomically, mode kept) and the binary; idempotent. */
  uninstall(): void {
    for (const name of listConfNames(this.opts.confDir)) {
      const f = readConf(this.opts.confDir, name);
      const without = f && withoutEntry(f);
      if (f === undefined || without === undefined) continue;
      writeAtomic(f.path, serialize(without), modeOf(f.path) ?? 0o644);
      this.opts.log.info({ file: f.path }, 'removed meshcap-cni entry');
    }
    if (existsSync(this.binaryPath)) {
      rmSync(this.binaryPath, { force: true });
      this.opts.log.info({ path: this.binaryPath }, 'removed plugin binary');
    }
    rmSync(this.ownerPath, { force: true });
  }

  /** Counts a repair; warns when another writer keeps taking the entry out. */
  private noteRepair(): void {
    const now = Date.now();
    this.repairs.push(now);
    while ((this.repairs[0] ?? now) < now - FIGHT_WINDOW_MS) this.repairs.shift();
    if (this.repairs.length > FIGHT_REPAIRS) {
      this.opts.log.warn(
        { repairs: this.repairs.length, seconds: FIGHT_WINDOW_MS / 1000, hint: 'with Cilium set cni.exclusive=false; a primary CNI that rewrites its file needs its own chaining config' },
        'another writer keeps reverting the CNI config',
      );
    }
  }

  /**
   * Stays running until `signal`: re-checks after every change in the conf dir (inotify through fs.watch) and
   * every `recheckMs` (a missed event, a deleted binary), repairing what is missing.
   */
  async watch(signal: AbortSignal, recheckMs: number): Promise<void> {
    const { log } = this.opts;
    let waiting = false;
    let handedOver = false;
    const check = (why: string) => {
      if (why !== 'start' && !this.owns()) {
        if (!handedOver) log.info({}, 'a newer installer took over: standing by');
        handedOver = true;
        return;
      }
      try {
        const r = this.install();
        if (why === 'start' && r !== 'no-primary') log.info({ why: this.inPlace().why }, 'installed; watching');
        else if (r === 'installed' && !waiting) {
          log.info({ trigger: why }, 'repaired');
          this.noteRepair();
        }
        if (r === 'no-primary' && !waiting) log.warn({ dir: this.opts.confDir }, 'waiting for a primary CNI config');
        waiting = r === 'no-primary';
      } catch (err) {
        log.error({ err: (err as Error).message }, 'install round failed; retrying');
      }
    };
    this.claim();
    check('start');
    let pending: NodeJS.Timeout | undefined;
    const soon = (why: string) => {
      clearTimeout(pending);
      pending = setTimeout(() => check(why), 100);
    };
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(this.opts.confDir, () => soon('conf dir changed'));
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot watch the conf dir; relying on the periodic re-check');
    }
    const timer = setInterval(() => check('periodic re-check'), recheckMs);
    try {
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    } finally {
      watcher?.close();
      clearInterval(timer);
      clearTimeout(pending);
    }
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { CriClient, type PodSandboxConfig } from './client.js';
import { importPauseImage } from './pause-image.js';

/**
 * A private containerd 1.6 (Debian's package) driven through its CRI as kubelet drives it: its own root,
 * state, sockets, runc root and config under one short work dir; CNI bin and conf dirs of its own; a pause
 * image built and imported here. The system's containerd (if any) is never touched: everything is addressed
 * through this instance's socket, and only this instance's processes are ended, by PID.
 * Outside the work dir, and removed by destroy(): the host bridge, libcni's cache entries of this network and
 * its sandboxes, the shims' socket dir (if created here), the pods' cgroups (a parent unique to the run).
 */

const PAUSE = 'localhost/meshcap-pause:1';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Leftovers {
  readonly netnsMounts: number;
  readonly veths: number;
  readonly leases: number;
  readonly lockFiles: number;
  readonly sandboxes: number;
}

/** Whether the process named in a meshcap lock file still runs (an unreadable file was just released). */
function holderAlive(lockFile: string): boolean {
  try {
    process.kill(Number(readFileSync(lockFile, 'utf8')), 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Removes a cgroup parent (and the pods' cgroups under it) from every hierarchy, deepest first; a cgroup dir holds only control files. */
export function removeCgroups(parent: string): void {
  const rmTree = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rmTree(join(dir, e.name));
    try {
      rmdirSync(dir);
    } catch {
      // still has a process (a shim that outlived its kill): left for the next run's report
    }
  };
  const roots = existsSync('/sys/fs/cgroup/cgroup.controllers') ? ['/sys/fs/cgroup'] : readdirSync('/sys/fs/cgroup').map((h) => join('/sys/fs/cgroup', h));
  for (const root of roots) if (existsSync(join(root, parent))) rmTree(join(root, parent));
}

export class PrivateContainerd {
  readonly dir = mkdtempSync('/tmp/mcri-');
  readonly id = randomBytes(3).toString('hex');
  readonly network = `mcnet${this.id}`;
  readonly bridge = `mcbr${this.id}`;
  readonly cgroup = `meshcap-cri-${this.id}`;
  readonly socket = join(this.dir, 'containerd.sock');
  readonly binDir = join(this.dir, 'cni-bin');
  readonly confDir = join(this.dir, 'net.d');
  readonly pluginLog = join(this.dir, 'log', 'meshcap-cni.log');
  private proc: ChildProcess | undefined;
  private client: CriClient | undefined;
  private readonly sandboxIds = new Set<string>();
  /** `<dev>-<ino>` of every pod namespace seen, to find meshcap's lock files for them. */
  private readonly namespaceIds = new Set<string>();
  private readonly created: string[] = [];

  constructor(readonly subnet = '198.51.100.0/24') {
    for (const d of ['/var/lib/cni', '/var/lib/cni/results', '/run/containerd', '/run/containerd/s']) if (!existsSync(d)) this.created.push(d);
    for (const d of [this.binDir, this.confDir, join(this.dir, 'ipam'), join(this.dir, 'log'), join(this.dir, 'runc')]) mkdirSync(d, { recursive: true });
    // containerd 1.6 reads every plugin, loopback included, from one bin dir.
    for (const p of ['bridge', 'host-local', 'loopback']) symlinkSync(`/usr/lib/cni/${p}`, join(this.binDir, p));
  }

  get cri(): CriClient {
    if (this.client === undefined) throw new Error('containerd is not started');
    return this.client;
  }

  /** The bridge + host-local entry, documentation addresses, no gateway, no masquerade: nothing on the host's routes or iptables. */
  bridgePlugin(): Record<string, unknown> {
    return { type: 'bridge', bridge: this.bridge, isGateway: false, ipMasq: false, hairpinMode: false, ipam: { type: 'host-local', ranges: [[{ subnet: this.subnet }]], dataDir: join(this.dir, 'ipam') } };
  }

  /** Writes `10-<net>.conflist`: bridge, then `chained`. */
  writeConflist(chained: readonly Record<string, unknown>[], cniVersion = '1.0.0'): string {
    const path = join(this.confDir, `10-${this.network}.conflist`);
    writeFileSync(path, `${JSON.stringify({ cniVersion, name: this.network, plugins: [this.bridgePlugin(), ...chained] }, null, 2)}\n`);
    return path;
  }

  /** Puts the plugin under test into the bin dir: the executable itself, or a script running the Node build. */
  installPlugin(command: { file: string; args: readonly string[] }): void {
    const target = join(this.binDir, 'meshcap-cni');
    if (command.args.length === 0) symlinkSync(command.file, target);
    else writeFileSync(target, `#!/bin/sh\nexec ${[command.file, ...command.args].join(' ')} "$@"\n`, { mode: 0o755 });
  }

  private writeConfig(): string {
    const d = this.dir;
    const path = join(d, 'config.toml');
    const disabled = ['internal.v1.opt', 'snapshotter.v1.aufs', 'snapshotter.v1.btrfs', 'snapshotter.v1.devmapper', 'snapshotter.v1.zfs', 'snapshotter.v1.overlayfs'];
    writeFileSync(
      path,
      [
        'version = 2',
        `root = "${d}/root"`,
        `state = "${d}/state"`,
        `disabled_plugins = [${disabled.map((p) => `"io.containerd.${p}"`).join(', ')}]`,
        '[grpc]',
        `  address = "${this.socket}"`,
        '[ttrpc]',
        `  address = "${this.socket}.ttrpc"`,
        '[plugins."io.containerd.grpc.v1.cri"]',
        `  sandbox_image = "${PAUSE}"`,
        // root without CAP_SYS_RESOURCE cannot give the sandbox oom_score_adj -998
        '  restrict_oom_score_adj = true',
        '  netns_mounts_under_state_dir = true',
        '  enable_selinux = false',
        '  disable_apparmor = true',
        '  [plugins."io.containerd.grpc.v1.cri".cni]',
        `    bin_dir = "${this.binDir}"`,
        `    conf_dir = "${this.confDir}"`,
        '    max_conf_num = 1',
        '  [plugins."io.containerd.grpc.v1.cri".containerd]',
        '    snapshotter = "native"',
        '    default_runtime_name = "runc"',
        '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '      runtime_type = "io.containerd.runc.v2"',
        '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
        `        Root = "${d}/runc"`,
        '        SystemdCgroup = false',
        '',
      ].join('\n'),
    );
    return path;
  }

  /** Starts containerd (the conflist must be written first: CRI loads it asynchronously), waits for Ready, imports the pause image. */
  async start(): Promise<void> {
    const log = openSync(join(this.dir, 'containerd.log'), 'a');
    this.proc = spawn('containerd', ['--config', this.writeConfig(), '--log-level', 'info'], { stdio: ['ignore', log, log] });
    closeSync(log);
    this.client = new CriClient(this.socket);
    const deadline = Date.now() + 30_000;
    let why = 'no answer';
    for (;;) {
      if (this.proc.exitCode !== null) throw new Error(`containerd exited: ${this.logTail()}`);
      if (existsSync(this.socket)) {
        try {
          const r = await this.client.ready();
          if (r.ok) break;
          why = r.why;
        } catch (err) {
          why = (err as Error).message;
        }
      }
      if (Date.now() > deadline) throw new Error(`containerd not ready: ${why}`);
      await sleep(100);
    }
    await importPauseImage(this.dir, this.socket, PAUSE);
  }

  logTail(lines = 5): string {
    try {
      return readFileSync(join(this.dir, 'containerd.log'), 'utf8').trim().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** A PodSandboxConfig as kubelet builds it (subset), in this run's cgroup parent; `hostNetwork` shares the node's namespace (no CNI). */
  podConfig(name: string, namespace: string, annotations: Readonly<Record<string, string>> = {}, hostNetwork = false): PodSandboxConfig {
    return {
      metadata: { name, namespace, uid: `uid-${name}-${this.id}`, attempt: 0 },
      // kubelet sets no hostname for a host-network pod (runc refuses one without a private UTS namespace)
      hostname: hostNetwork ? '' : name,
      annotations,
      labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': namespace },
      linux: { cgroup_parent: `/${this.cgroup}/pod-${name}`, security_context: { namespace_options: { network: hostNetwork ? 'NODE' : 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
    };
  }

  /** RunPodSandbox; remembers the id (and its namespace's identity) for teardown and the leftover count. */
  async runPod(name: string, namespace: string, annotations: Readonly<Record<string, string>> = {}, hostNetwork = false): Promise<string> {
    const id = await this.cri.runPodSandbox(this.podConfig(name, namespace, annotations, hostNetwork));
    this.sandboxIds.add(id);
    const { netns } = await this.cri.podSandboxStatus(id);
    const st = netns === '' ? undefined : await execa('stat', ['-L', '-c', '%d-%i', netns], { reject: false });
    if (st?.exitCode === 0) this.namespaceIds.add(st.stdout.trim());
    return id;
  }

  /** Stop, then Remove: what kubelet does when a pod goes. */
  async removePod(id: string): Promise<void> {
    await this.cri.stopPodSandbox(id);
    await this.cri.removePodSandbox(id);
  }

  /** Anything a pod could leave behind: netns mounts, veths on the bridge, IP leases, meshcap lock files, sandboxes. */
  async leftovers(): Promise<Leftovers> {
    const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '');
    const netnsMounts = mounts.filter((m) => m.startsWith(join(this.dir, 'state', 'io.containerd.grpc.v1.cri', 'netns'))).length;
    const links = await execa('ip', ['-o', 'link', 'show', 'master', this.bridge], { reject: false });
    const veths = links.exitCode === 0 ? links.stdout.split('\n').filter(Boolean).length : 0;
    const ipamDir = join(this.dir, 'ipam', this.network);
    const leases = existsSync(ipamDir) ? readdirSync(ipamDir).filter((f) => /^[0-9a-f.:]+$/.test(f) && f.includes('.')).length : 0;
    const lockDirs = ['/run/meshcap', '/tmp/meshcap-locks'];
    // A lock file of one of our pods' namespaces whose holder is gone. (A held one is a call in progress, and
    // inode numbers are reused: a parallel suite's namespace can carry one of ours while it works.)
    const lockFiles = lockDirs
      .flatMap((d) => (existsSync(d) ? readdirSync(d).map((f) => join(d, f)) : []))
      .filter((f) => this.namespaceIds.has(basename(f).replace(/^netns-/, '').replace(/\.lock$/, '')) && !holderAlive(f)).length;
    const sandboxes = this.client ? (await this.cri.listPodSandbox()).length : 0;
    return { netnsMounts, veths, leases, lockFiles, sandboxes };
  }

  /** Tears everything down, also after a failure: pods, containerd (by PID), shims (by PID), mounts, bridge, caches, cgroups, dirs. */
  async destroy(): Promise<void> {
    if (this.client && this.proc?.exitCode === null) {
      try {
        for (const p of await this.cri.listPodSandbox()) this.sandboxIds.add(p.id);
      } catch {
        // containerd is not answering: go on with what we know
      }
      // Eight at a time, as kubelet's pod workers would: a lab of 50 pods goes in seconds, not half a minute.
      const ids = [...this.sandboxIds];
      for (let i = 0; i < ids.length; i += 8) await Promise.all(ids.slice(i, i + 8).map((id) => this.removePod(id).catch(() => undefined)));
    }
    this.client?.close();
    await this.stopContainerd();
    this.killShims();
    const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((m) => m.startsWith(`${this.dir}/`));
    for (const m of mounts.sort().reverse()) await execa('umount', ['-l', m], { reject: false });
    await execa('ip', ['link', 'del', this.bridge], { reject: false });
    this.removeCaches();
    removeCgroups(this.cgroup);
    for (const d of [...this.created].reverse()) await execa('rmdir', [d], { reject: false });
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** After destroy(): whatever of this lab is still on the machine (should be nothing). */
  async residue(): Promise<string[]> {
    const out: string[] = [];
    if (existsSync(this.dir)) out.push(`dir ${this.dir}`);
    if ((await execa('ip', ['link', 'show', this.bridge], { reject: false })).exitCode === 0) out.push(`bridge ${this.bridge}`);
    if (readFileSync('/proc/self/mounts', 'utf8').includes(`${this.dir}/`)) out.push('mounts');
    for (const h of readdirSync('/sys/fs/cgroup')) if (existsSync(join('/sys/fs/cgroup', h, this.cgroup))) out.push(`cgroup ${h}/${this.cgroup}`);
    if (this.proc?.exitCode === null) out.push(`containerd pid ${this.proc.pid}`);
    if (existsSync('/var/lib/cni/results') && readdirSync('/var/lib/cni/results').some((f) => f.startsWith(`${this.network}-`))) out.push('libcni cache');
    return out;
  }

  private async stopContainerd(): Promise<void> {
    const p = this.proc;
    if (p?.pid === undefined || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    if ((await Promise.race([exited, sleep(5000).then(() => 'timeout')])) === 'timeout') {
      p.kill('SIGKILL');
      await exited;
    }
  }

  /** A shim outlives containerd while its pod runs: find this instance's shims by their `-address` and end them by PID. */
  private killShims(): void {
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      } catch {
        continue;
      }
      if (cmdline.includes(`-address ${this.socket} `)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }

  /** libcni's result cache: `<net>-<id>-eth0` and `cni-loopback-<id>-lo`, for this network and these sandboxes only. */
  private removeCaches(): void {
    const dir = '/var/lib/cni/results';
    if (!existsSync(dir)) return;
    for (const f of readdirSync(dir)) {
      const ours = f.startsWith(`${this.network}-`) || [...this.sandboxIds].some((id) => f.startsWith(`cni-loopback-${id}-`));
      if (ours) rmSync(join(dir, f), { force: true });
    }
  }
}

import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { randomBytes } from 'node:crypto';
import { entryCommand } from './paths.js';

/**
 * A private podman (CNI backend) set-up (podman with its CNI network backend): its own
 * containers.conf, storage, network config dir and plugin dir in one work dir; no image (a busybox rootfs);
 * the bridge without gateway or masquerade, so the host's addresses, routes, sysctls and iptables are never
 * touched. `destroy()` removes every container, the bridges, libcni's cache entries and the work dir.
 */
export class PodmanLab {
  readonly dir: string;
  private readonly networks: { name: string; bridge: string }[] = [];
  private readonly containers = new Set<string>();

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'meshcap-podman-'));
    for (const d of ['rootfs/bin', 'cni-bin', 'net.d', 'ipam', 'storage', 'runroot', 'tmp', 'log']) mkdirSync(join(this.dir, d), { recursive: true });
    copyFileSync('/bin/busybox', join(this.dir, 'rootfs/bin/busybox'));
    chmodSync(join(this.dir, 'rootfs/bin/busybox'), 0o755);
    for (const a of ['sh', 'sleep', 'ip', 'cat', 'true']) symlinkSync('busybox', join(this.dir, 'rootfs/bin', a));
    // The plugin as a node wrapper around the bundle, or the self-contained executable itself.
    const plugin = join(this.dir, 'cni-bin', 'meshcap-cni');
    const { file, args } = entryCommand('meshcap-cni');
    if (args.length === 0) copyFileSync(file, plugin);
    else writeFileSync(plugin, `#!/bin/sh\nexec ${file} ${args.join(' ')} "$@"\n`);
    chmodSync(plugin, 0o755);
    writeFileSync(
      join(this.dir, 'containers.conf'),
      `[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[network]
network_backend = "cni"
network_config_dir = "${this.dir}/net.d"
cni_plugin_dirs = ["${this.dir}/cni-bin", "/usr/lib/cni"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "${this.dir}/events.log"
tmp_dir = "${this.dir}/tmp"
`,
    );
  }

  get logFile(): string {
    return join(this.dir, 'log', 'meshcap-cni.log');
  }

  /** Writes a conflist [bridge + host-local on 198.51.100.0/24, meshcap-cni with `plugin`]; returns its name. */
  addNetwork(cniVersion: string, plugin: Record<string, unknown>): string {
    const suffix = randomBytes(3).toString('hex');
    const name = `mcnet${suffix}`;
    const bridge = `mcbr${suffix}`;
    const conflist = {
      cniVersion,
      name,
      plugins: [
        { type: 'bridge', bridge, isGateway: false, ipMasq: false, hairpinMode: false, ipam: { type: 'host-local', ranges: [[{ subnet: '198.51.100.0/24' }]], dataDir: join(this.dir, 'ipam') } },
        { type: 'meshcap-cni', log_file: this.logFile, ...plugin },
      ],
    };
    writeFileSync(join(this.dir, 'net.d', `${name}.conflist`), JSON.stringify(conflist, null, 2));
    this.networks.push({ name, bridge });
    return name;
  }

  podman(args: readonly string[]) {
    return execa('podman', ['--root', join(this.dir, 'storage'), '--runroot', join(this.dir, 'runroot'), '--storage-driver', 'vfs', ...args], {
      reject: false,
      env: { CONTAINERS_CONF: join(this.dir, 'containers.conf') },
    });
  }

  /** Starts a sleeping container on `network`; returns its id. */
  async run(network: string): Promise<{ id: string; exitCode: number; stderr: string }> {
    const name = `mcc${randomBytes(3).toString('hex')}`;
    const r = await this.podman(['run', '-d', '--name', name, '--network', network, '--rootfs', join(this.dir, 'rootfs'), '/bin/sleep', '600']);
    this.containers.add(name);
    return { id: r.stdout.trim(), exitCode: r.exitCode ?? -1, stderr: r.stderr };
  }

  async inspect(id: string, format: string): Promise<string> {
    return (await this.podman(['inspect', '-f', format, id])).stdout.trim();
  }

  pluginLog(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  async destroy(): Promise<void> {
    for (const c of this.containers) await this.podman(['rm', '-f', '-t', '0', c]);
    for (const n of this.networks) {
      await execa('ip', ['link', 'del', n.bridge], { reject: false });
      await execa('sh', ['-c', `rm -f /var/lib/cni/results/${n.name}-*`], { reject: false });
    }
    // podman's vfs storage may hold mounts (shm): unmount them before removing the work dir.
    const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((m) => m.startsWith(this.dir)).sort().reverse();
    for (const m of mounts) await execa('umount', ['-l', m], { reject: false });
    rmSync(this.dir, { recursive: true, force: true });
  }
}

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetns, deleteNetns, requireRoot, type Netns } from '../helpers/netns.js';
import { ISTIO_INIT_ARGS } from '../helpers/plan.js';
import { REPO_ROOT } from '../helpers/paths.js';

requireRoot();

/**
 * The image, built with podman from the repository's Dockerfile on a Debian base made here with debootstrap
 * (no image registry is reachable), then run the way the kubelet runs istio-init: in the pod's network
 * namespace with NET_ADMIN and NET_RAW and a read-only root file system, istio-init's arguments, twice (a
 * restarted init container).
 * Private podman storage; the namespace, images and work dir are removed afterwards.
 */
describe('the meshcap image as istio-init', { timeout: 180_000 }, () => {
  let dir = '';
  let ns: Netns | undefined;
  const image = 'localhost/meshcap:test';
  const podman = (args: readonly string[]) =>
    execa('podman', ['--root', join(dir, 'storage'), '--runroot', join(dir, 'runroot'), '--storage-driver', 'vfs', ...args], {
      reject: false,
      env: { CONTAINERS_CONF: join(dir, 'containers.conf') },
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meshcap-image-'));
    mkdirSync(join(dir, 'tmp'));
    writeFileSync(
      join(dir, 'containers.conf'),
      `[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\nevents_logfile_path = "${dir}/events.log"\ntmp_dir = "${dir}/tmp"\n`,
    );
    const rootfs = join(dir, 'rootfs');
    const boot = await execa('debootstrap', ['--variant=minbase', '--include=iptables,iproute2,ipset,util-linux', 'bookworm', rootfs, 'http://deb.debian.org/debian'], { reject: false });
    if (boot.exitCode !== 0) throw new Error(`debootstrap failed: ${boot.stderr.slice(-500)}`);
    const imported = await execa('sh', ['-c', `tar -C '${rootfs}' -c . | podman --root '${dir}/storage' --runroot '${dir}/runroot' --storage-driver vfs import - localhost/meshcap-base:test`], {
      reject: false,
      env: { CONTAINERS_CONF: join(dir, 'containers.conf') },
    });
    if (imported.exitCode !== 0) throw new Error(`podman import failed: ${imported.stderr}`);
    rmSync(rootfs, { recursive: true, force: true });
    const built = await podman(['build', '--network', 'host', '--build-arg', 'BASE=localhost/meshcap-base:test', '--build-arg', 'BINS_FROM=prebuilt', '-t', image, '-f', join(REPO_ROOT, 'Dockerfile'), REPO_ROOT]);
    if (built.exitCode !== 0) throw new Error(`podman build failed: ${built.stderr.slice(-2000)}`);
    ns = await createNetns('mcimg');
    await ns.run('ip', ['link', 'set', 'lo', 'up']);
  }, 600_000);

  afterAll(async () => {
    await deleteNetns(ns);
    if (dir !== '') {
      await podman(['rmi', '-a', '-f']);
      const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((m) => m.startsWith(dir)).sort().reverse();
      for (const m of mounts) await execa('umount', ['-l', m], { reject: false });
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  const runInit = () =>
    podman(['run', '--rm', '--read-only', '--network', `ns:${ns!.path}`, '--cap-add', 'NET_ADMIN,NET_RAW', '--entrypoint', '/usr/local/bin/istio-iptables', image, ...ISTIO_INIT_ARGS, '--ipv6', 'off']);

  it('installs istio-init rules in the pod namespace, as `istio-iptables` with istio-init arguments', async () => {
    const r = await runInit();
    expect(r.stderr).toContain('"msg":"applied"');
    expect(r.exitCode).toBe(0);
    const save = (await ns!.run('iptables-save', [])).stdout;
    expect(save).toContain('-A ISTIO_OUTPUT -j ISTIO_REDIRECT');
    expect(save).toContain('-A ISTIO_INBOUND -p tcp -m tcp --dport 15021 -j RETURN');
  });

  it('succeeds again when the kubelet restarts the init container', async () => {
    const before = (await ns!.run('iptables-save', [])).stdout.split('\n').filter((l) => !l.startsWith('#')).join('\n');
    const r = await runInit();
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('"action":"unchanged"');
    expect((await ns!.run('iptables-save', [])).stdout.split('\n').filter((l) => !l.startsWith('#')).join('\n')).toBe(before);
  });

  it('carries the CNI plugin under its own name and no Node.js', async () => {
    const version = await podman(['run', '--rm', '--network', 'none', '-e', 'CNI_COMMAND=VERSION', '--entrypoint', '/usr/local/bin/meshcap-cni', image]);
    expect(JSON.parse(version.stdout)).toMatchObject({ supportedVersions: expect.arrayContaining(['1.0.0']) });
    const node = await podman(['run', '--rm', '--network', 'none', '--entrypoint', '/bin/sh', image, '-c', 'command -v node || echo none']);
    expect(node.stdout.trim()).toBe('none');
  });

  it('has the OCI labels and the default istio-init command', async () => {
    const labels = JSON.parse((await podman(['image', 'inspect', '--format', '{{json .Labels}}', image])).stdout) as Record<string, string>;
    expect(labels['org.opencontainers.image.title']).toBe('meshcap');
    const cmd = (await podman(['image', 'inspect', '--format', '{{json .Config.Cmd}}', image])).stdout;
    expect(cmd).toContain('15090,15021,15020');
  });
});

import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';

/**
 * A pause image built here, with no registry: busybox-static's `sleep` as the entrypoint (CRI stops a
 * sandbox with SIGKILL, so nothing else is needed), written as an OCI layout archive whose index names it
 * through `io.containerd.image.name`, and imported with `ctr`.
 */

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Moves a file into the layout's blobs under its digest; returns `{digest, size}`. */
function addBlob(blobs: string, path: string): { digest: string; size: number } {
  const hex = sha256(path);
  const size = statSync(path).size;
  renameSync(path, join(blobs, hex));
  return { digest: `sha256:${hex}`, size };
}

function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value));
  return path;
}

export async function importPauseImage(workDir: string, socket: string, name: string): Promise<void> {
  const dir = join(workDir, 'image');
  const rootfs = join(dir, 'rootfs');
  const oci = join(dir, 'oci');
  const blobs = join(oci, 'blobs', 'sha256');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  mkdirSync(blobs, { recursive: true });
  copyFileSync('/bin/busybox', join(rootfs, 'bin', 'busybox'));
  symlinkSync('busybox', join(rootfs, 'bin', 'sleep'));
  await execa('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', rootfs, '-cf', join(dir, 'layer.tar'), '.']);
  const layer = addBlob(blobs, join(dir, 'layer.tar'));
  const config = addBlob(
    blobs,
    writeJson(join(dir, 'config.json'), { architecture: 'amd64', os: 'linux', config: { Entrypoint: ['/bin/sleep', '2147483647'], Env: ['PATH=/bin'] }, rootfs: { type: 'layers', diff_ids: [layer.digest] } }),
  );
  const manifest = addBlob(
    blobs,
    writeJson(join(dir, 'manifest.json'), {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layer }],
    }),
  );
  writeJson(join(oci, 'index.json'), {
    schemaVersion: 2,
    manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest, annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': '1' } }],
  });
  writeJson(join(oci, 'oci-layout'), { imageLayoutVersion: '1.0.0' });
  await execa('tar', ['-C', oci, '-cf', join(dir, 'pause.tar'), '.']);
  await execa('ctr', ['-a', socket, '-n', 'k8s.io', 'images', 'import', '--snapshotter', 'native', join(dir, 'pause.tar')]);
  rmSync(dir, { recursive: true, force: true });
}

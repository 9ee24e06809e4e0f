import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runInstallCni } from '../../../src/cli/install-cni.js';
import { fakeHost } from '../../helpers/cli.js';
import { REPO_ROOT } from '../../helpers/paths.js';

/** deploy/cni-daemonset.yaml as written: its installer command and readiness probe, run on real temp dirs. */

interface Container {
  name: string;
  command: string[];
  readinessProbe: { exec: { command: string[] } };
  volumeMounts: { name: string; mountPath: string }[];
}
interface Manifest {
  kind: string;
  data?: Record<string, string>;
  spec?: { template: { spec: { containers: Container[]; initContainers?: unknown[] } } };
}

const docs = parseAllDocuments(readFileSync(resolve(REPO_ROOT, 'deploy', 'cni-daemonset.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
const configMap = docs.find((d) => d.kind === 'ConfigMap');
const daemonSet = docs.find((d) => d.kind === 'DaemonSet');
const containers = daemonSet?.spec?.template.spec.containers ?? [];

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('deploy/cni-daemonset.yaml', () => {
  it('runs only the installer: one container, no init container, no conflist of its own', () => {
    expect(containers.map((c) => c.name)).toEqual(['install-cni']);
    expect(daemonSet?.spec?.template.spec.initContainers).toBeUndefined();
    expect(Object.keys(configMap?.data ?? {})).toEqual(['plugin.json']);
  });

  it('installs the entry with its command and is ready by its probe, on the host dirs it mounts', async () => {
    root = mkdtempSync(join(tmpdir(), 'meshcap-ds-'));
    const [c] = containers;
    if (c === undefined) throw new Error('no container');
    const paths = new Map(c.volumeMounts.map((m) => [m.mountPath, join(root, m.name)]));
    for (const p of paths.values()) mkdirSync(p);
    writeFileSync(join(root, 'config', 'plugin.json'), configMap?.data?.['plugin.json'] ?? '');
    writeFileSync(join(root, 'cni-conf', '10-flannel.conflist'), JSON.stringify({ name: 'cbr0', cniVersion: '0.3.1', plugins: [{ type: 'flannel' }] }));
    writeFileSync(join(root, 'plugin'), '#!/bin/sh\n');
    /** The container's paths onto the temp dirs standing in for the mounted volumes. */
    const onHost = (args: string[]) => args.map((a) => [...paths].reduce((s, [mount, dir]) => s.replace(mount, dir), a));
    const run = async (cmd: string[]) => {
      let stderr = '';
      const code = await runInstallCni(onHost(cmd.slice(2)), { host: fakeHost(), stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) }, selfExecutable: join(root, 'plugin') });
      return { code, stderr };
    };
    expect(c.command.slice(0, 2)).toEqual(['/usr/local/bin/meshcap', 'install-cni']);
    expect(await run(c.readinessProbe.exec.command)).toMatchObject({ code: 5 });
    expect(await run([...c.command, '--once'])).toEqual({ code: 0, stderr: expect.any(String) });
    const list = JSON.parse(readFileSync(join(root, 'cni-conf', '10-flannel.conflist'), 'utf8')) as { plugins: Record<string, unknown>[] };
    expect(list.plugins.at(-1)).toMatchObject({ type: 'meshcap-cni', mode: 'sidecar', exclude_namespaces: ['kube-system', 'istio-system'], capabilities: { 'io.kubernetes.cri.pod-annotations': true } });
    expect(await run(c.readinessProbe.exec.command)).toMatchObject({ code: 0 });
  });
});

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Pod } from 'kubernetes-models/v1';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import { runAgentCommand } from '../../../src/agent/run.js';
import { fakeHost } from '../../helpers/cli.js';
import { REPO_ROOT } from '../../helpers/paths.js';

/**
 * deploy/*.yaml as written: every manifest validated against the Kubernetes API schema of a current release
 * (kubernetes-models' generated validators), and the DaemonSet's agent command run on real temp dirs.
 */

interface Container {
  name: string;
  command: string[];
  ports: { name: string; containerPort: number }[];
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  volumeMounts: { name: string; mountPath: string }[];
}
interface Manifest {
  kind: string;
  data?: Record<string, string>;
  spec?: { template: { spec: { hostNetwork?: boolean; containers: Container[]; initContainers?: unknown[]; volumes: { name: string; hostPath?: { path: string } }[] } } };
}

const load = (file: string) => parseAllDocuments(readFileSync(resolve(REPO_ROOT, 'deploy', file), 'utf8')).map((d) => d.toJS() as Manifest);
const docs = load('cni-daemonset.yaml');
const configMap = docs.find((d) => d.kind === 'ConfigMap');
const daemonSet = docs.find((d) => d.kind === 'DaemonSet');
const containers = daemonSet?.spec?.template.spec.containers ?? [];
const MODELS: Record<string, new (data: never) => { validate(): void }> = { ConfigMap, DaemonSet, Pod };

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('deploy/ manifests against the Kubernetes API schema', () => {
  it.each(['cni-daemonset.yaml', 'istio-init-pod.yaml'])('%s: every document is valid for its kind', (file) => {
    const all = load(file);
    expect(all.length).toBeGreaterThan(0);
    for (const doc of all) {
      const Model = MODELS[doc.kind];
      if (Model === undefined) throw new Error(`no schema model for kind ${doc.kind}`);
      expect(() => new Model(doc as never).validate()).not.toThrow();
    }
  });

  it('the schema check can fail: a port that is not a number is refused', () => {
    const broken = structuredClone(daemonSet) as Manifest;
    const c = broken.spec?.template.spec.containers[0] as unknown as { ports: { containerPort: unknown }[] };
    c.ports = [{ containerPort: 'metrics' }];
    expect(() => new DaemonSet(broken as never).validate()).toThrow(/containerPort must be integer/);
  });
});

describe('deploy/cni-daemonset.yaml', () => {
  it('runs the node agent: one container, no init container, no conflist of its own', () => {
    expect(containers.map((c) => c.name)).toEqual(['node-agent']);
    expect(daemonSet?.spec?.template.spec.initContainers).toBeUndefined();
    expect(Object.keys(configMap?.data ?? {})).toEqual(['plugin.json']);
  });

  it('mounts the CRI socket dir, the netns dir and the lock dir, and probes /healthz and /readyz on the metrics port it serves', () => {
    const [c] = containers;
    if (c === undefined) throw new Error('no container');
    const mounts = new Map(c.volumeMounts.map((m) => [m.name, m.mountPath]));
    const hostPaths = new Map(daemonSet?.spec?.template.spec.volumes.map((v) => [v.name, v.hostPath?.path]));
    const socket = c.command.find((a) => a.startsWith('--cri-socket='))?.split('=')[1] ?? '';
    expect(socket.startsWith(`${mounts.get('containerd-run')}/`)).toBe(true);
    expect(hostPaths.get('containerd-run')).toBe('/run/containerd');
    expect([mounts.get('netns'), hostPaths.get('netns')]).toEqual(['/var/run/netns', '/var/run/netns']);
    expect([mounts.get('meshcap-locks'), hostPaths.get('meshcap-locks')]).toEqual(['/run/meshcap', '/run/meshcap']);
    expect(c.ports).toEqual([{ name: 'metrics', containerPort: 15014, protocol: 'TCP' }]);
    expect(c.command).toContain('--metrics-address=0.0.0.0:15014');
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
  });

  it('installs the entry with its command on the host dirs it mounts (--once), and --check agrees', async () => {
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
      const code = await runAgentCommand(onHost(cmd.slice(1)), { host: fakeHost(), stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } });
      return { code, stderr };
    };
    expect(c.command.slice(0, 2)).toEqual(['/usr/local/bin/meshcap', 'node-agent']);
    expect(await run([...c.command, '--check'])).toMatchObject({ code: 5 });
    expect(await run([...c.command, '--once', `--plugin-binary=${join(root, 'plugin')}`])).toEqual({ code: 0, stderr: expect.any(String) });
    const list = JSON.parse(readFileSync(join(root, 'cni-conf', '10-flannel.conflist'), 'utf8')) as { plugins: Record<string, unknown>[] };
    expect(list.plugins.at(-1)).toMatchObject({ type: 'meshcap-cni', mode: 'sidecar', exclude_namespaces: ['kube-system', 'istio-system'], capabilities: { 'io.kubernetes.cri.pod-annotations': true } });
    expect(await run([...c.command, '--check'])).toMatchObject({ code: 0 });
  });
});

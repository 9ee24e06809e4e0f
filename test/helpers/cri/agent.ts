import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { entryCommand, IMPL } from '../paths.js';
import type { PrivateContainerd } from './containerd.js';

/**
 * `meshcap node-agent` as a process against a private containerd (the Node build, or with MESHCAP_IMPL=bin the
 * executable, which installs itself as the plugin): its log lines as they come, its HTTP endpoints, and an
 * end by signal. Every agent started here is ended by its PID (stop(), or kill() in afterAll).
 */

export const meshcap = entryCommand('meshcap');

/** Under the Node build the plugin to install is a script running dist/meshcap-cni.cjs; the executable installs itself. */
export function pluginBinaryArgs(dir: string): string[] {
  if (IMPL === 'bin') return [];
  const { file, args } = entryCommand('meshcap-cni');
  const script = join(dir, 'meshcap-cni-node');
  writeFileSync(script, `#!/bin/sh\nexec ${[file, ...args].join(' ')} "$@"\n`, { mode: 0o755 });
  return ['--plugin-binary', script];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<number> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
  return Date.now() - start;
}

/** A sample's value in Prometheus text (`name{labels} value`); undefined when absent. */
export function metricValue(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

export interface Agent {
  readonly pid: number | undefined;
  readonly port: number;
  /** The JSON log records so far. */
  records(): Record<string, unknown>[];
  /** Log records with this message. */
  logged(msg: string): Record<string, unknown>[];
  get(path: string): Promise<{ status: number; body: string }>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ exitCode: number | undefined; signal: string | undefined }>;
  /** SIGKILL without waiting (afterAll after a failure). */
  kill(): void;
}

export function agentArgs(lab: PrivateContainerd, pluginConfig: object, port: number, extra: readonly string[] = []): string[] {
  return [
    'node-agent',
    '--cni-conf-dir', lab.confDir,
    '--cni-bin-dir', lab.binDir,
    '--cri-socket', lab.socket,
    '--plugin-config', JSON.stringify(pluginConfig),
    '--sweep-interval', '2',
    '--recheck-interval', '1',
    '--metrics-address', `127.0.0.1:${port}`,
    ...pluginBinaryArgs(lab.dir),
    ...extra,
  ];
}

let nextPort = 20_000 + Math.floor(Math.random() * 20_000);

/** Starts the agent; `nodeNetns` (a namespace name) runs it there instead of the machine's own namespace (the node side of ambient). */
export function startAgent(lab: PrivateContainerd, pluginConfig: object, extra: readonly string[] = [], nodeNetns?: string): Agent {
  const port = nextPort++;
  const argv = [meshcap.file, ...meshcap.args, ...agentArgs(lab, pluginConfig, port, extra)];
  const [file, ...args] = nodeNetns === undefined ? argv : ['ip', 'netns', 'exec', nodeNetns, ...argv];
  const proc = execa(file as string, args, { reject: false, buffer: false, stdin: 'ignore' });
  let text = '';
  proc.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  proc.stdout?.on('data', () => undefined);
  const records = () => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    pid: proc.pid,
    port,
    records,
    logged: (msg) => records().filter((r) => r['msg'] === msg),
    async get(path) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}${path}`);
        return { status: r.status, body: await r.text() };
      } catch {
        return { status: 0, body: '' };
      }
    },
    async stop(signal = 'SIGTERM') {
      proc.kill(signal);
      const r = await proc;
      return { exitCode: r.exitCode, signal: r.signal };
    },
    kill() {
      proc.kill('SIGKILL');
    },
  };
}

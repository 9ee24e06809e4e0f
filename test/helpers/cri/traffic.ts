import { resolve } from 'node:path';
import { execa } from 'execa';
import { REPO_ROOT } from '../paths.js';

/**
 * Real TCP inside a pod's network namespace (by path, as containerd mounts it): a listener that reports the
 * original destination (test/fixtures/tcp_probe.py), a client, and a held reference that keeps a namespace
 * readable after the runtime unmounted it. Every process started here is ended by its PID.
 */

const PROBE = resolve(REPO_ROOT, 'test', 'fixtures', 'tcp_probe.py');
const as = (uid: number) => ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];

export const nsExec = (netns: string, args: readonly string[]) => execa('nsenter', [`--net=${netns}`, '--', ...args], { reject: false });

export async function iptablesSaveIn(netns: string): Promise<string> {
  return (await nsExec(netns, ['iptables-save'])).stdout;
}

export interface Listener {
  stop(): Promise<void>;
}

/** `tcp_probe.py serve NAME PORT` in the namespace, as `uid`; resolves once it listens. */
export async function listenIn(netns: string, name: string, port: number, uid = 0): Promise<Listener> {
  const proc = execa('nsenter', [`--net=${netns}`, '--', ...as(uid), '/usr/bin/python3', PROBE, 'serve', name, String(port)], { reject: false, buffer: false });
  const stop = async () => {
    proc.kill('SIGKILL');
    await proc.catch(() => undefined);
  };
  try {
    await new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`listener ${name}:${port} did not start`)), 10_000);
      proc.stdout?.on('data', (d: Buffer) => {
        if (d.toString().includes('READY')) {
          clearTimeout(timer);
          ok();
        }
      });
      void proc.then(() => fail(new Error(`listener ${name}:${port} exited`)));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}

/** Connects from the namespace as `uid` (an app, not the proxy): the listener's answer, `NAME PORT ORIG_IP ORIG_PORT PEER`. */
export async function connectFrom(netns: string, host: string, port: number, uid = 1000): Promise<string> {
  const r = await nsExec(netns, [...as(uid), '/usr/bin/python3', PROBE, 'connect', host, String(port), '--timeout', '3']);
  return r.stdout.trim();
}

export interface HeldNamespace {
  save(): Promise<string>;
  release(): Promise<void>;
}

/** Keeps a namespace alive through a process of ours, so its rules can be read after the runtime unmounts it. */
export async function holdNamespace(netns: string): Promise<HeldNamespace> {
  const proc = execa('nsenter', [`--net=${netns}`, '--', 'sleep', '600'], { reject: false });
  await new Promise((r) => setTimeout(r, 50));
  return {
    save: async () => {
      if (proc.pid === undefined) return '';
      return (await execa('nsenter', ['-t', String(proc.pid), '-n', 'iptables-save'], { reject: false })).stdout;
    },
    release: async () => {
      proc.kill('SIGKILL');
      await proc.catch(() => undefined);
    },
  };
}

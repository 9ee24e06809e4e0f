import { execa } from 'execa';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createNetns, deleteNetns, type Netns } from './netns.js';
import { entryCommand, REPO_ROOT } from './paths.js';

const PROBE = resolve(REPO_ROOT, 'test', 'fixtures', 'tcp_probe.py');
/** Debian's interpreter: a per-user shim (pyenv) is not usable by the test UIDs. */
const PYTHON = '/usr/bin/python3';

/** Documentation addresses only. The peer answers on all of its addresses. */
export const ADDR = {
  podV4: '198.51.100.2',
  peerV4: '198.51.100.1',
  podV6: '2001:db8:1::2',
  peerV6: '2001:db8:1::1',
  /** On the peer, reached through the pod's default route. */
  remoteV4: '203.0.113.10',
  remoteV4Excluded: '203.0.113.200',
  otherV4: '192.0.2.10',
  remoteV6: '2001:db8:2::10',
  otherV6: '2001:db8:3::10',
} as const;

export interface Identity {
  readonly uid: number;
  readonly gid: number;
  /** Extra capabilities (e.g. net_admin for a TPROXY listener). */
  readonly caps?: readonly string[];
  /** The ids are the pod's: the process runs in the user namespace that owns the pod's network namespace. */
  readonly podUserns?: boolean;
}
export const ROOT: Identity = { uid: 0, gid: 0 };
export const APP: Identity = { uid: 1000, gid: 1000 };
export const PROXY: Identity = { uid: 1337, gid: 1337 };

const IN_USERNS = resolve(REPO_ROOT, 'test', 'fixtures', 'in_userns.py');

function asUser(id: Identity, ns: Netns): string[] {
  const enter = id.podUserns === true ? [PYTHON, IN_USERNS, ns.path] : [];
  if (id.uid === 0) return enter;
  const caps = id.caps?.map((c) => `+${c}`).join(',');
  return [...enter, 'setpriv', `--reuid=${id.uid}`, `--regid=${id.gid}`, '--clear-groups', ...(caps ? [`--inh-caps=${caps}`, `--ambient-caps=${caps}`] : [])];
}

async function batch(ns: Netns, lines: string[]): Promise<void> {
  const r = await execa('ip', ['-n', ns.name, '-batch', '-'], { input: `${lines.join('\n')}\n`, reject: false });
  if (r.exitCode !== 0) throw new Error(`ip -batch in ${ns.name} failed: ${r.stderr}`);
}

/**
 * A "pod" and a "peer" namespace joined by a veth pair, IPv4 and IPv6, made entirely inside the two
 * namespaces (the machine's own namespace is never touched). Every process started here is tracked by PID
 * and killed by `destroy()`, which also deletes both namespaces.
 */
export class PodTopology {
  private readonly procs: { child: ChildProcess; done: Promise<unknown> }[] = [];
  private constructor(
    readonly pod: Netns,
    readonly peer: Netns,
  ) {}

  /** With `userns`, the pod's namespace is owned by a user namespace of its own (netns.ts USERNS_BASE). */
  static async create(opts: { userns?: boolean } = {}): Promise<PodTopology> {
    const pod = await createNetns('mcpod', opts);
    let peer: Netns | undefined;
    try {
      peer = await createNetns('mcpeer');
      const t = new PodTopology(pod, peer);
      await batch(pod, [
        `link add eth0 type veth peer name eth0 netns ${peer.name}`,
        `address add ${ADDR.podV4}/24 dev eth0`,
        `address add ${ADDR.podV6}/64 dev eth0 nodad`,
        'link set lo up',
        'link set eth0 up',
        `route add default via ${ADDR.peerV4}`,
        `route add ::/0 via ${ADDR.peerV6}`,
      ]);
      await batch(peer, [
        `address add ${ADDR.peerV4}/24 dev eth0`,
        `address add ${ADDR.peerV6}/64 dev eth0 nodad`,
        `address add ${ADDR.remoteV4}/32 dev lo`,
        `address add ${ADDR.remoteV4Excluded}/32 dev lo`,
        `address add ${ADDR.otherV4}/32 dev lo`,
        `address add ${ADDR.remoteV6}/128 dev lo nodad`,
        `address add ${ADDR.otherV6}/128 dev lo nodad`,
        'link set lo up',
        'link set eth0 up',
      ]);
      return t;
    } catch (err) {
      await deleteNetns(peer);
      await deleteNetns(pod);
      throw err;
    }
  }

  /** Starts a tcp_probe.py listener (TCP, or UDP with `udp`) in `ns` and waits until it listens. */
  async serve(ns: Netns, id: Identity, name: string, ports: readonly number[], opts: { transparent?: boolean; udp?: boolean } = {}): Promise<void> {
    const mode = opts.udp ? ['serve-udp', name, String(ports[0])] : ['serve', name, ports.join(','), ...(opts.transparent ? ['--transparent'] : [])];
    const args = ['netns', 'exec', ns.name, ...asUser(id, ns), PYTHON, PROBE, ...mode];
    const proc = execa('ip', args, { reject: false, buffer: false, stdin: 'ignore' });
    this.procs.push({ child: proc, done: proc });
    await new Promise<void>((ok, fail) => {
      let out = '';
      const timer = setTimeout(() => fail(new Error(`${name} did not start`)), 10_000);
      proc.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('READY')) {
          clearTimeout(timer);
          ok();
        }
      });
      proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      void proc.then(() => {
        clearTimeout(timer);
        fail(new Error(`${name} exited: ${out}`));
      });
    });
  }

  /** Connects from `ns` as `id` and returns the first line the far end sent (or "ERROR …"). */
  async connect(ns: Netns, id: Identity, host: string, port: number, bind?: string, opts: { mark?: number } = {}): Promise<string> {
    const mark = opts.mark === undefined ? [] : ['--mark', String(opts.mark)];
    return this.probe(ns, id, ['connect', host, String(port), ...(bind ? ['--bind', bind] : []), ...mark, '--timeout', '2']);
  }

  /** Sends one UDP datagram from `ns` as `id` and returns the answer (or "ERROR …"). */
  udp(ns: Netns, id: Identity, host: string, port: number): Promise<string> {
    return this.probe(ns, id, ['udp', host, String(port), '--timeout', '2']);
  }

  private async probe(ns: Netns, id: Identity, args: readonly string[]): Promise<string> {
    const r = await execa('ip', ['netns', 'exec', ns.name, ...asUser(id, ns), PYTHON, PROBE, ...args], { reject: false });
    return r.stdout.trim() || `ERROR ${r.stderr.trim()}`;
  }

  /** Runs the built meshcap against the pod namespace (or `ns`). */
  meshcap(args: readonly string[], ns: Netns = this.pod, env: Record<string, string> = {}) {
    const { file, args: pre } = entryCommand();
    return execa(file, [...pre, ...args, '--netns', ns.path], { reject: false, env });
  }

  async destroy(): Promise<void> {
    for (const p of this.procs) if (p.child.pid !== undefined && p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.allSettled(this.procs.map((p) => p.done));
    await deleteNetns(this.peer);
    await deleteNetns(this.pod);
  }
}

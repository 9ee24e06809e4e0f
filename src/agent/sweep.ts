import type { Host } from '../config/host.js';
import { CriRuntime, type Sandbox } from '../cri/runtime.js';
import { mapLimited } from '../exec/limit.js';
import type { Runner } from '../exec/runner.js';
import type { Logger } from '../log.js';
import type { NetConf } from '../node/plugin-config.js';
import { checkPod, type PodReport } from './pod-check.js';
import { syncProbeSet } from './probe-set.js';

/**
 * One sweep over the node: the runtime's ready sandboxes (read fresh from the CRI every time: nothing is
 * kept between sweeps), each checked — and repaired when asked — on its own, a few at a time. One pod's
 * failure is its report (`error`, logged with its namespace/name); the sweep goes on.
 */

export interface SweepDeps {
  readonly criSocket: string;
  readonly conf: NetConf;
  readonly host: Host;
  readonly makeRunner: (netns: string | undefined) => Runner;
  readonly log: Logger;
  readonly repair: boolean;
  /** Pods checked at once (each in its own namespace, under its own lock). */
  readonly concurrency?: number;
  /** Opens the runtime for one sweep (default: a CRI client on criSocket). */
  readonly connect?: (socket: string) => CriRuntime;
}

export interface SweepResult {
  readonly pods: readonly PodReport[];
  readonly repairs: number;
  readonly errors: number;
  readonly processes: number;
  readonly ms: number;
}

async function checkSandbox(cri: CriRuntime, id: string, deps: SweepDeps): Promise<{ report: PodReport; sandbox: Sandbox } | undefined> {
  let sandbox: Sandbox | undefined;
  try {
    sandbox = await cri.sandbox(id);
    if (sandbox === undefined) return undefined;
    const s = sandbox;
    const report = await checkPod(s, { ...deps, stillReady: async (sid) => (await cri.sandbox(sid)) !== undefined });
    return report === undefined ? undefined : { report, sandbox: s };
  } catch (err) {
    const report: PodReport = { namespace: sandbox?.namespace ?? '', name: sandbox?.name ?? '', id, state: 'error', reason: (err as Error).message, repaired: false, processes: 0 };
    return { report, sandbox: sandbox ?? { id, name: '', namespace: '', uid: '', annotations: {}, netns: undefined, hostNetwork: false, ips: [] } };
  }
}

/** One sweep; throws only when the runtime cannot be asked at all (no socket, no answer to the list). */
export async function sweepNode(deps: SweepDeps): Promise<SweepResult> {
  const started = performance.now();
  const cri = (deps.connect ?? ((socket: string) => new CriRuntime(socket)))(deps.criSocket);
  try {
    const ids = await cri.listReadySandboxes();
    const checked = (await mapLimited(ids, deps.concurrency ?? 4, (id) => checkSandbox(cri, id, deps))).filter((c) => c !== undefined);
    const pods = checked.map((c) => c.report);
    for (const p of pods.filter((r) => r.state === 'error')) deps.log.warn({ namespace: p.namespace, name: p.name, id: p.id, reason: p.reason }, 'pod check failed');
    const enrolled = checked.filter((c) => c.report.state !== 'not-enrolled' && c.report.state !== 'error').map((c) => c.sandbox);
    const probe = await syncProbeSet(enrolled, deps);
    return {
      pods,
      repairs: pods.filter((p) => p.repaired).length + probe.repairs,
      errors: pods.filter((p) => p.state === 'error').length + probe.errors,
      processes: pods.reduce((n, p) => n + p.processes, 0) + probe.processes,
      ms: performance.now() - started,
    };
  } finally {
    cri.close();
  }
}

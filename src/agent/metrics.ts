import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { EnvironmentError } from '../errors.js';
import type { PodState } from './pod-check.js';
import type { SweepResult } from './sweep.js';

/**
 * The agent's Prometheus metrics (prom-client, its own registry) and its HTTP endpoints: `/metrics`,
 * `/healthz` (200 while the sweep loop runs), `/readyz` (200 once the entry is installed and a first sweep
 * finished). Labels are low-cardinality: states and reasons, never pod names.
 */

export const POD_STATES: readonly PodState[] = ['captured', 'bypassing', 'drifted', 'not-enrolled', 'error'];

export class AgentMetrics {
  readonly registry = new Registry();
  private readonly pods = new Gauge({ name: 'meshcap_pods', help: 'Sandboxes on the node by capture state, from the last sweep (a repaired pod counts as captured)', labelNames: ['state'], registers: [this.registry] });
  private readonly repairs = new Counter({ name: 'meshcap_repairs_total', help: 'Repairs made by the sweeps (pods whose rules were put back, and the node probe set)', registers: [this.registry] });
  private readonly repairsFound = new Counter({ name: 'meshcap_pod_repairs_total', help: 'Pod repairs by what the sweep found', labelNames: ['found'], registers: [this.registry] });
  private readonly duration = new Histogram({ name: 'meshcap_sweep_duration_seconds', help: 'Duration of a sweep over the node', buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [this.registry] });
  private readonly errors = new Counter({ name: 'meshcap_sweep_errors_total', help: 'Failed pod checks, and sweeps that could not ask the runtime', registers: [this.registry] });
  private readonly sweeps = new Counter({ name: 'meshcap_sweeps_total', help: 'Sweeps finished', registers: [this.registry] });
  private readonly installed = new Gauge({ name: 'meshcap_cni_installed', help: '1 while the plugin binary is installed and our entry is last in the primary CNI config', registers: [this.registry] });

  constructor() {
    for (const state of POD_STATES) this.pods.set({ state: state.replace('-', '_') }, 0);
    for (const found of ['bypassing', 'drifted']) this.repairsFound.inc({ found }, 0);
  }

  recordSweep(result: SweepResult): void {
    const counts = new Map(POD_STATES.map((s) => [s, 0]));
    for (const p of result.pods) {
      const now = p.repaired ? 'captured' : p.state;
      counts.set(now, (counts.get(now) ?? 0) + 1);
      if (p.repaired) this.repairsFound.inc({ found: p.state });
    }
    for (const [state, n] of counts) this.pods.set({ state: state.replace('-', '_') }, n);
    this.repairs.inc(result.repairs);
    this.errors.inc(result.errors);
    this.duration.observe(result.ms / 1000);
    this.sweeps.inc();
  }

  recordFailedSweep(ms: number): void {
    this.errors.inc();
    this.duration.observe(ms / 1000);
  }

  setInstalled(ok: boolean): void {
    this.installed.set(ok ? 1 : 0);
  }
}

/** `HOST:PORT` (`[v6]:PORT` for IPv6) → the listen address; a ConfigError-free parse: the caller names the flag. */
export function parseListenAddress(v: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(v);
  const port = Number(m?.[3]);
  if (m === null || !Number.isInteger(port) || port > 65535) return undefined;
  return { host: m[1] ?? m[2] ?? '', port };
}

export interface Probes {
  readonly healthy: () => boolean;
  readonly ready: () => { ok: boolean; why: string };
}

/** Serves /metrics, /healthz and /readyz; resolves once listening (EnvironmentError when the port cannot be had). */
export async function serveMetrics(address: { host: string; port: number }, metrics: AgentMetrics, probes: Probes): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed\n');
    if (path === '/metrics') {
      metrics.registry.metrics().then((text) => reply(200, text, metrics.registry.contentType), (err: Error) => reply(500, `${err.message}\n`));
      return;
    }
    if (path === '/healthz') return probes.healthy() ? reply(200, 'ok\n') : reply(503, 'the sweep loop is not running\n');
    if (path === '/readyz') {
      const r = probes.ready();
      return reply(r.ok ? 200 : 503, `${r.why}\n`);
    }
    reply(404, 'not found: /metrics, /healthz, /readyz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new EnvironmentError(`cannot serve metrics on ${address.host}:${address.port} (--metrics-address): ${err.message}`)));
    server.listen(address.port, address.host, () => resolve());
  });
  return server;
}

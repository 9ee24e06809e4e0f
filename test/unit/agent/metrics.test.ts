import { afterEach, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { AgentMetrics, parseListenAddress, serveMetrics } from '../../../src/agent/metrics.js';
import type { PodReport } from '../../../src/agent/pod-check.js';

const pod = (name: string, state: PodReport['state'], repaired = false): PodReport => ({ namespace: 'default', name, id: `id-${name}`, state, reason: '', repaired, processes: 2 });
const value = (text: string, sample: string) => Number(text.split('\n').find((l) => l.startsWith(`${sample} `))?.split(' ')[1]);

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

describe('parseListenAddress', () => {
  it.each([
    ['0.0.0.0:15014', { host: '0.0.0.0', port: 15014 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['[::]:15014', { host: '::', port: 15014 }],
    [':9090', { host: '', port: 9090 }],
  ])('reads %s', (text, want) => {
    expect(parseListenAddress(text)).toEqual(want);
  });

  it.each(['15014', '0.0.0.0', '0.0.0.0:70000', '::1:80', 'host:port'])('refuses %s', (text) => {
    expect(parseListenAddress(text)).toBeUndefined();
  });
});

describe('AgentMetrics', () => {
  it('sets the pod gauge from the last sweep (a repaired pod counts as captured) and counts repairs by what was found', async () => {
    const m = new AgentMetrics();
    m.recordSweep({ pods: [pod('a', 'captured'), pod('b', 'bypassing', true), pod('c', 'drifted', true), pod('d', 'not-enrolled'), pod('e', 'error')], repairs: 2, errors: 1, processes: 10, ms: 120 });
    m.setInstalled(true);
    let text = await m.registry.metrics();
    expect(value(text, 'meshcap_pods{state="captured"}')).toBe(3);
    expect(value(text, 'meshcap_pods{state="not_enrolled"}')).toBe(1);
    expect(value(text, 'meshcap_pods{state="error"}')).toBe(1);
    expect(value(text, 'meshcap_pods{state="bypassing"}')).toBe(0);
    expect(value(text, 'meshcap_repairs_total')).toBe(2);
    expect(value(text, 'meshcap_pod_repairs_total{found="bypassing"}')).toBe(1);
    expect(value(text, 'meshcap_pod_repairs_total{found="drifted"}')).toBe(1);
    expect(value(text, 'meshcap_sweep_errors_total')).toBe(1);
    expect(value(text, 'meshcap_sweep_duration_seconds_count')).toBe(1);
    expect(value(text, 'meshcap_cni_installed')).toBe(1);
    m.recordSweep({ pods: [pod('a', 'captured')], repairs: 0, errors: 0, processes: 2, ms: 10 });
    text = await m.registry.metrics();
    expect(value(text, 'meshcap_pods{state="captured"}')).toBe(1);
    expect(value(text, 'meshcap_pods{state="error"}')).toBe(0);
    expect(value(text, 'meshcap_repairs_total')).toBe(2);
  });

  it('serves /metrics, /healthz and /readyz with the status codes of its probes', async () => {
    let ready = false;
    const m = new AgentMetrics();
    server = await serveMetrics({ host: '127.0.0.1', port: 0 }, m, { healthy: () => true, ready: () => ({ ok: ready, why: ready ? 'in place' : 'the first sweep has not finished' }) });
    const addr = server.address();
    const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
    const get = async (path: string, method = 'GET') => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { method });
      return { status: r.status, body: await r.text(), type: r.headers.get('content-type') };
    };
    expect(await get('/healthz')).toMatchObject({ status: 200 });
    expect(await get('/readyz')).toMatchObject({ status: 503, body: 'the first sweep has not finished\n' });
    ready = true;
    expect(await get('/readyz')).toMatchObject({ status: 200 });
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain('text/plain');
    expect(metrics.body).toContain('# TYPE meshcap_sweep_duration_seconds histogram');
    expect((await get('/nope')).status).toBe(404);
    expect((await get('/metrics', 'POST')).status).toBe(405);
  });

  it('names the flag when the port cannot be had', async () => {
    server = await serveMetrics({ host: '127.0.0.1', port: 0 }, new AgentMetrics(), { healthy: () => true, ready: () => ({ ok: true, why: '' }) });
    const addr = server.address();
    const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
    await expect(serveMetrics({ host: '127.0.0.1', port }, new AgentMetrics(), { healthy: () => true, ready: () => ({ ok: true, why: '' }) })).rejects.toThrow(/--metrics-address/);
  });
});

// The node agent at scale: a private containerd (the tests' lab) with N injected pods started before the
// agent; the agent (the self-contained executable, --sweep-interval 1) captures them, then every sweep over
// the N captured pods only reads. Prints JSON: the first sweep and the median of the steady sweeps.
import { execa } from 'execa';
import { PrivateContainerd } from '../test/helpers/cri/containerd.js';

const N = Number(process.env['BENCH_PODS'] ?? 50);
const STEADY = 7;
const BIN = 'dist/bin/meshcap';
const INJECTED = { 'sidecar.istio.io/status': JSON.stringify({ initContainers: ['istio-validation'], containers: ['istio-proxy'] }) };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const lab = new PrivateContainerd('203.0.113.0/24');
let stopAgent = async (): Promise<void> => undefined;
try {
  lab.writeConflist([]);
  await lab.start();
  for (let i = 0; i < N; i += 8) await Promise.all(Array.from({ length: Math.min(8, N - i) }, (_, j) => lab.runPod(`bench${i + j}`, 'default', INJECTED)));
  const cfg = JSON.stringify({ mode: 'sidecar', ipv6: 'off', log_file: lab.pluginLog });
  const args = ['node-agent', '--cni-conf-dir', lab.confDir, '--cni-bin-dir', lab.binDir, '--cri-socket', lab.socket, '--plugin-config', cfg, '--sweep-interval', '1', '--metrics-address', '127.0.0.1:0'];
  const agent = execa(BIN, args, { reject: false, buffer: false, stdin: 'ignore' });
  stopAgent = async () => {
    agent.kill('SIGKILL');
    await agent;
  };
  let text = '';
  agent.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  const swept = () => text.split('\n').filter((l) => l.includes('"msg":"swept"')).map((l) => JSON.parse(l) as Record<string, number>);
  const deadline = Date.now() + 180_000;
  while (swept().length < STEADY + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  const all = swept();
  const steady = all.slice(2).filter((s) => s['captured'] === N && s['repairs'] === 0);
  const status = await execa(BIN, ['node-status', '--cri-socket', lab.socket, '--cni-conf-dir', lab.confDir, '--json'], { reject: false });
  const started = performance.now();
  await execa(BIN, ['node-status', '--cri-socket', lab.socket, '--cni-conf-dir', lab.confDir, '--json'], { reject: false });
  const statusMs = performance.now() - started;
  const out = { pods: N, first: all[0], steadyMs: median(steady.map((s) => s['ms'] ?? NaN)), steadyProcesses: median(steady.map((s) => s['processes'] ?? NaN)), steadySweeps: steady.length, nodeStatusExit: status.exitCode, nodeStatusMs: statusMs };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
  await stopAgent();
  await lab.destroy();
}

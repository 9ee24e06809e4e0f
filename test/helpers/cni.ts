import { execa } from 'execa';
import type { Netns } from './netns.js';
import { entryCommand } from './paths.js';

/** An injected pod, as containerd passes its annotations (the entry declares the capability). */
export const INJECTED_POD = {
  capabilities: { 'io.kubernetes.cri.pod-annotations': true },
  runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { 'sidecar.istio.io/status': JSON.stringify({ containers: ['app', 'istio-proxy'], initContainers: [] }) } },
};

/** The istio-iptables flags istio-cni derives for such a pod with the plugin's defaults (IPv4). */
export const ISTIO_CNI_FLAGS = ['-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15020,15021,15090', '-o', '15020', '--ipv6', 'off'];

export interface CniCall {
  /** The attachment's container id, also the pod's name (default `pod0`). */
  readonly id?: string;
  /** Runs the plugin inside this namespace (standing in for the node's). */
  readonly node?: Netns;
  readonly env?: Record<string, string>;
}

/**
 * One meshcap-cni invocation as a runtime makes it against `pod`: argv, CNI_* environment and the network
 * config on stdin (`conf` over a chained entry with a prevResult, IPv6 off), for a pod in `default`.
 */
export function cniInvocation(command: string, pod: Netns, conf: object, call: CniCall = {}): { argv: string[]; env: Record<string, string>; input: string } {
  const id = call.id ?? 'pod0';
  const { file, args } = entryCommand('meshcap-cni');
  const env = { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: pod.path, CNI_IFNAME: 'eth0', CNI_PATH: '/usr/lib/cni', CNI_ARGS: `K8S_POD_NAMESPACE=default;K8S_POD_NAME=${id}`, ...call.env };
  const input = JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'meshcap-cni', ipv6: 'off', ...conf, prevResult: { cniVersion: '1.0.0', ips: [{ address: '198.51.100.2/24' }] } });
  const argv = call.node === undefined ? [file, ...args] : ['ip', 'netns', 'exec', call.node.name, file, ...args];
  return { argv, env, input };
}

/** Runs one invocation; resolves with its exit code, stdout (the CNI result or error) and stderr (logs). */
export function runCni(command: string, pod: Netns, conf: object, call: CniCall = {}) {
  const { argv, env, input } = cniInvocation(command, pod, conf, call);
  return execa(argv[0] ?? '', argv.slice(1), { reject: false, input, env });
}

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvironmentError } from '../errors.js';

/**
 * The kubelet's UID, found as Istio's node agent finds it (istio-nftables.md §5): the first process whose
 * comm is `kubelet` or `kubelite` (MicroK8s) with "kubelet" in its command line, or `k3s`; its real UID.
 */
const KUBELETS: readonly { comm: string; needsKubeletArg: boolean }[] = [
  { comm: 'kubelet', needsKubeletArg: true },
  { comm: 'kubelite', needsKubeletArg: true },
  { comm: 'k3s', needsKubeletArg: false },
];

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The real UID of a /proc/<pid>/status text. */
export function parseStatusUid(status: string): number | undefined {
  const m = /^Uid:\s+(\d+)/m.exec(status);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

export function findKubeletUid(procRoot = '/proc'): number {
  let pids: string[];
  try {
    pids = readdirSync(procRoot).filter((p) => /^[0-9]+$/.test(p));
  } catch (err) {
    throw new EnvironmentError(`cannot read ${procRoot} to find the kubelet's UID: ${(err as Error).message}; give --kubelet-uid`);
  }
  for (const pid of pids.sort((a, b) => Number(a) - Number(b))) {
    const comm = readOrUndefined(join(procRoot, pid, 'comm'))?.trim();
    const kind = KUBELETS.find((k) => k.comm === comm);
    if (kind === undefined) continue;
    if (kind.needsKubeletArg) {
      const args = (readOrUndefined(join(procRoot, pid, 'cmdline')) ?? '').split('\0');
      if (!args.some((a) => a.toLowerCase().includes('kubelet'))) continue;
    }
    const uid = parseStatusUid(readOrUndefined(join(procRoot, pid, 'status')) ?? '');
    if (uid !== undefined) return uid;
  }
  throw new EnvironmentError(`no kubelet, kubelite or k3s process found in ${procRoot}: give the kubelet's UID with --kubelet-uid`);
}

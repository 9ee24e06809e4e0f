import { callRuntime, connectRuntime, CriError, type RuntimeStub } from '../../../src/cri/channel.js';

/**
 * meshcap's test CRI client: the kubelet side of CRI v1's RuntimeService over containerd's unix socket,
 * through the product's own channel (src/cri/channel.ts: @grpc/grpc-js and the embedded runtime.v1 subset),
 * plus the calls only kubelet makes (RunPodSandbox, StopPodSandbox, RemovePodSandbox). Calls reject with
 * `rpc error: code = N (NAME) desc = …` (crictl's spelling), so a test can look for the plugin's message.
 */

export { CriError };

/** A PodSandboxConfig as kubelet sends it (the fields containerd's CNI set-up reads). */
export interface PodSandboxConfig {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly uid: string; readonly attempt: number };
  readonly hostname: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly linux: { readonly cgroup_parent: string; readonly security_context: { readonly namespace_options: { readonly network: 'POD' | 'NODE'; readonly pid: 'CONTAINER'; readonly ipc: 'POD' } } };
}

export interface SandboxStatus {
  readonly id: string;
  readonly state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  readonly ip: string;
  /** containerd's verbose info: the pause process and the network namespace path. */
  readonly pid: number;
  readonly netns: string;
}

interface SandboxInfo {
  pid?: number;
  runtimeSpec?: { linux?: { namespaces?: { type?: string; path?: string }[] } };
}

export class CriClient {
  private readonly stub: RuntimeStub;

  constructor(
    socket: string,
    private readonly timeoutMs = 60_000,
  ) {
    this.stub = connectRuntime(socket);
  }

  private call<T>(method: string, req: unknown): Promise<T> {
    return callRuntime<T>(this.stub, method, req, this.timeoutMs);
  }

  version(): Promise<{ runtime_name: string; runtime_version: string; runtime_api_version: string }> {
    return this.call('Version', { version: 'v1' });
  }

  /** RuntimeReady and NetworkReady, as kubelet waits for them; the reasons when not. */
  async ready(): Promise<{ ok: boolean; why: string }> {
    const r = await this.call<{ status: { conditions: { type: string; status: boolean; reason: string; message: string }[] } }>('Status', { verbose: false });
    const bad = r.status.conditions.filter((c) => !c.status);
    const types = new Set(r.status.conditions.filter((c) => c.status).map((c) => c.type));
    const ok = types.has('RuntimeReady') && types.has('NetworkReady');
    return { ok, why: bad.map((c) => `${c.type}: ${c.reason} ${c.message}`).join('; ') };
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    return (await this.call<{ pod_sandbox_id: string }>('RunPodSandbox', { config, runtime_handler: '' })).pod_sandbox_id;
  }

  async stopPodSandbox(id: string): Promise<void> {
    await this.call('StopPodSandbox', { pod_sandbox_id: id });
  }

  async removePodSandbox(id: string): Promise<void> {
    await this.call('RemovePodSandbox', { pod_sandbox_id: id });
  }

  async podSandboxStatus(id: string): Promise<SandboxStatus> {
    const r = await this.call<{ status: { id: string; state: SandboxStatus['state']; network: { ip: string } | null }; info: Record<string, string> }>('PodSandboxStatus', { pod_sandbox_id: id, verbose: true });
    const info = JSON.parse(r.info['info'] ?? '{}') as SandboxInfo;
    const netns = info.runtimeSpec?.linux?.namespaces?.find((n) => n.type === 'network')?.path ?? '';
    return { id: r.status.id, state: r.status.state, ip: r.status.network?.ip ?? '', pid: info.pid ?? 0, netns };
  }

  async listPodSandbox(): Promise<{ id: string; state: string; name: string }[]> {
    const r = await this.call<{ items: { id: string; state: string; metadata: { name: string } | null }[] }>('ListPodSandbox', { filter: null });
    return r.items.map((p) => ({ id: p.id, state: p.state, name: p.metadata?.name ?? '' }));
  }

  close(): void {
    this.stub.close();
  }
}

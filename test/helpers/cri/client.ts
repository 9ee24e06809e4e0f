import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * meshcap's test CRI client: the kubelet side of CRI v1's RuntimeService over containerd's unix socket,
 * with @grpc/grpc-js and the subset of the API in runtime-v1.proto beside this file. Calls reject with
 * `rpc error: code = N (NAME) desc = …` (crictl's spelling), so a test can look for the plugin's message.
 */

const PROTO = join(dirname(fileURLToPath(import.meta.url)), 'runtime-v1.proto');

/** A PodSandboxConfig as kubelet sends it (the fields containerd's CNI set-up reads). */
export interface PodSandboxConfig {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly uid: string; readonly attempt: number };
  readonly hostname: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly linux: { readonly cgroup_parent: string; readonly security_context: { readonly namespace_options: { readonly network: 'POD'; readonly pid: 'CONTAINER'; readonly ipc: 'POD' } } };
}

export interface SandboxStatus {
  readonly id: string;
  readonly state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  readonly ip: string;
  /** containerd's verbose info: the pause process and the network namespace path. */
  readonly pid: number;
  readonly netns: string;
}

type Callback = (err: grpc.ServiceError | null, res: unknown) => void;
type Method = (req: unknown, opts: grpc.CallOptions, cb: Callback) => void;

let definition: grpc.GrpcObject | undefined;
function loadDefinition(): grpc.GrpcObject {
  definition ??= grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { keepCase: true, enums: String, longs: String, defaults: true }));
  return definition;
}

export class CriError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`rpc error: code = ${code} (${grpc.status[code] ?? 'UNKNOWN'}) desc = ${details}`);
  }
}

interface SandboxInfo {
  pid?: number;
  runtimeSpec?: { linux?: { namespaces?: { type?: string; path?: string }[] } };
}

export class CriClient {
  private readonly stub: grpc.Client & Record<string, Method>;

  constructor(
    socket: string,
    private readonly timeoutMs = 60_000,
  ) {
    const ns = loadDefinition()['runtime'] as grpc.GrpcObject;
    const Service = (ns['v1'] as grpc.GrpcObject)['RuntimeService'] as grpc.ServiceClientConstructor;
    this.stub = new Service(`unix://${socket}`, grpc.credentials.createInsecure()) as grpc.Client & Record<string, Method>;
  }

  private call<T>(method: string, req: unknown): Promise<T> {
    return new Promise((resolve, reject) => {
      const fn = this.stub[method];
      if (fn === undefined) return reject(new Error(`no CRI method ${method}`));
      fn.call(this.stub, req, { deadline: Date.now() + this.timeoutMs }, (err, res) => (err ? reject(new CriError(err.code, err.details)) : resolve(res as T)));
    });
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

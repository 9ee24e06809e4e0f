import { existsSync } from 'node:fs';
import * as z from 'zod/mini';
import { EnvironmentError } from '../errors.js';
import { callRuntime, connectRuntime, CriError, type RuntimeStub } from './channel.js';

/**
 * What the node's container runtime says about its pod sandboxes, through CRI v1 as kubelet asks:
 * ListPodSandbox (ready ones) and PodSandboxStatus (verbose: the network namespace path). Every answer
 * passes a schema before it is used; nothing is kept between calls (the runtime is the truth).
 */

export interface Sandbox {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly annotations: Readonly<Record<string, string>>;
  /** The sandbox's network namespace path; undefined for a host-network sandbox. */
  readonly netns: string | undefined;
  readonly hostNetwork: boolean;
  /** The pod's addresses (the primary first). */
  readonly ips: readonly string[];
}

const str = z._default(z.string(), '');
const strMap = z._default(z.record(z.string(), z.string()), {});
const metadata = z._default(z.nullable(z.looseObject({ name: str, uid: str, namespace: str })), null);
const listSchema = z.looseObject({ items: z._default(z.array(z.looseObject({ id: z.string(), state: str })), []) });
const statusSchema = z.looseObject({
  status: z.looseObject({
    id: z.string(),
    state: str,
    metadata,
    annotations: strMap,
    network: z._default(z.nullable(z.looseObject({ ip: str, additional_ips: z._default(z.array(z.looseObject({ ip: str })), []) })), null),
    linux: z._default(z.nullable(z.looseObject({ namespaces: z._default(z.nullable(z.looseObject({ options: z._default(z.nullable(z.looseObject({ network: str })), null) })), null) })), null),
  }),
  info: strMap,
});
/** containerd's verbose `info`: the OCI spec of the sandbox, whose network namespace entry has the path. */
const infoSchema = z.looseObject({
  runtimeSpec: z.optional(z.looseObject({ linux: z.optional(z.looseObject({ namespaces: z.optional(z.array(z.looseObject({ type: z.optional(z.string()), path: z.optional(z.string()) }))) })) })),
});

function parseAnswer<T>(schema: z.ZodMiniType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new EnvironmentError(`unexpected ${what} answer from the CRI: ${r.error.issues[0]?.path.join('.') ?? ''} ${r.error.issues[0]?.message ?? ''}`);
  return r.data;
}

function netnsFromInfo(info: Readonly<Record<string, string>>): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(info['info'] ?? '{}');
  } catch {
    return undefined;
  }
  const r = infoSchema.safeParse(json);
  const path = r.success ? r.data.runtimeSpec?.linux?.namespaces?.find((n) => n.type === 'network')?.path : undefined;
  return path === undefined || path === '' ? undefined : path;
}

export class CriRuntime {
  private readonly stub: RuntimeStub;

  /** Fails (EnvironmentError, exit 5) when there is no socket at `socket`. */
  constructor(
    readonly socket: string,
    private readonly timeoutMs = 10_000,
  ) {
    if (!existsSync(socket)) throw new EnvironmentError(`no CRI socket at ${socket} (--cri-socket)`);
    this.stub = connectRuntime(socket);
  }

  async version(): Promise<{ runtime_name: string; runtime_version: string; runtime_api_version: string }> {
    return callRuntime(this.stub, 'Version', { version: 'v1' }, this.timeoutMs);
  }

  /** The ids of the sandboxes the runtime reports ready (as kubelet lists them). */
  async listReadySandboxes(): Promise<string[]> {
    const r = parseAnswer(listSchema, await callRuntime(this.stub, 'ListPodSandbox', { filter: { state: { state: 'SANDBOX_READY' } } }, this.timeoutMs), 'ListPodSandbox');
    return r.items.filter((s) => s.state === '' || s.state === 'SANDBOX_READY').map((s) => s.id);
  }

  /** One sandbox in detail; undefined when it is gone (removed since the list) or no longer ready. */
  async sandbox(id: string): Promise<Sandbox | undefined> {
    let raw: unknown;
    try {
      raw = await callRuntime(this.stub, 'PodSandboxStatus', { pod_sandbox_id: id, verbose: true }, this.timeoutMs);
    } catch (err) {
      if (err instanceof CriError && err.grpcCode === 5) return undefined;
      throw err;
    }
    const { status, info } = parseAnswer(statusSchema, raw, 'PodSandboxStatus');
    if (status.state !== '' && status.state !== 'SANDBOX_READY') return undefined;
    const hostNetwork = status.linux?.namespaces?.options?.network === 'NODE';
    const ips = status.network === null ? [] : [status.network.ip, ...status.network.additional_ips.map((a) => a.ip)].filter(Boolean);
    return {
      id: status.id,
      name: status.metadata?.name ?? '',
      namespace: status.metadata?.namespace ?? '',
      uid: status.metadata?.uid ?? '',
      annotations: status.annotations,
      netns: hostNetwork ? undefined : netnsFromInfo(info),
      hostNetwork,
      ips,
    };
  }

  close(): void {
    this.stub.close();
  }
}

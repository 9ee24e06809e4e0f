import * as grpc from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';
import * as protobuf from 'protobufjs';
import { MeshcapError } from '../errors.js';
import { RUNTIME_V1_PROTO } from './runtime-v1-proto.js';

/**
 * A gRPC channel to a container runtime's CRI v1 RuntimeService over its unix socket (@grpc/grpc-js), from
 * the embedded .proto. Calls resolve with the decoded message as a plain object (proto field names, enums as
 * names, defaults filled in) or reject with a CriError that carries the gRPC status code.
 */

/** A CRI call that failed: the gRPC code (5 NOT_FOUND: the sandbox is gone; 14 UNAVAILABLE: no runtime), crictl's spelling. Exit 5. */
export class CriError extends MeshcapError {
  constructor(
    readonly grpcCode: number,
    readonly details: string,
  ) {
    super('environment', `rpc error: code = ${grpcCode} (${grpc.status[grpcCode] ?? 'UNKNOWN'}) desc = ${details}`);
    this.name = 'CriError';
  }
}

export const GRPC_NOT_FOUND = grpc.status.NOT_FOUND;

type Callback = (err: grpc.ServiceError | null, res: unknown) => void;
type Method = (req: unknown, opts: grpc.CallOptions, cb: Callback) => void;
export type RuntimeStub = grpc.Client & Record<string, Method>;

let service: grpc.ServiceClientConstructor | undefined;
function loadService(): grpc.ServiceClientConstructor {
  if (service === undefined) {
    const root = protobuf.parse(RUNTIME_V1_PROTO, { keepCase: true }).root;
    const pkg = grpc.loadPackageDefinition(fromJSON(root.toJSON(), { keepCase: true, enums: String, longs: String, defaults: true }));
    service = ((pkg['runtime'] as grpc.GrpcObject)['v1'] as grpc.GrpcObject)['RuntimeService'] as grpc.ServiceClientConstructor;
  }
  return service;
}

/** A client of the RuntimeService at `socket` (an absolute path). The channel connects on the first call. */
export function connectRuntime(socket: string): RuntimeStub {
  const Service = loadService();
  // A runtime that restarts comes back within a second or two: keep the reconnect backoff short.
  return new Service(`unix://${socket}`, grpc.credentials.createInsecure(), { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 1000 }) as RuntimeStub;
}

/** One unary call with a deadline. */
export function callRuntime<T>(stub: RuntimeStub, method: string, req: unknown, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const fn = stub[method];
    if (fn === undefined) return reject(new Error(`no CRI method ${method}`));
    fn.call(stub, req, { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(new CriError(err.code, err.details)) : resolve(res as T)));
  });
}

import { createServer, connect, type Server, type Socket } from 'node:net';
import { ValidationProbeError } from '../errors.js';
import type { Logger } from '../log.js';

export interface ValidationOptions {
  readonly outboundPort: number;
  readonly inboundPort: number;
  readonly probePort: number;
  readonly timeoutMs: number;
  readonly family: 'ipv4' | 'ipv6';
}

const ADDR = {
  ipv4: { local: '127.0.0.1', passthrough: '127.0.0.6' },
  ipv6: { local: '::1', passthrough: '::6' },
} as const;

function listen(port: number, host: string, onConn: (s: Socket) => void): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer(onConn);
    server.once('error', () => resolve(undefined));
    server.listen({ port, host, exclusive: false }, () => resolve(server));
  });
}

/**
 * Istio's `--run-validation` (istio-sidecar.md §11): listen on the proxy's two capture ports on localhost,
 * dial the passthrough address on the probe port from localhost once a second, and succeed when one of our
 * listeners accepts that very connection (matched by its source port) — which only a working redirect can
 * do. Must run as the proxy UID/GID. Times out with exit 126, as Istio.
 */
export async function runValidation(opts: ValidationOptions, log: Logger): Promise<void> {
  const addr = ADDR[opts.family];
  // A hit is a source port both dialled by us and accepted by a listener, whichever event comes first.
  const dialled = new Set<number>();
  const accepted = new Map<number, number>();
  let resolveHit: (port: number) => void = () => undefined;
  const hit = new Promise<number>((r) => (resolveHit = r));
  const check = (srcPort: number) => {
    const landedOn = accepted.get(srcPort);
    if (dialled.has(srcPort) && landedOn !== undefined) resolveHit(landedOn);
  };
  const onConn = (s: Socket) => {
    if (s.remotePort !== undefined) {
      accepted.set(s.remotePort, s.localPort ?? 0);
      check(s.remotePort);
    }
    s.destroy();
  };
  const servers = (await Promise.all([listen(opts.outboundPort, addr.local, onConn), listen(opts.inboundPort, addr.local, onConn)])).filter(
    (s): s is Server => s !== undefined,
  );
  if (servers.length === 0) throw new ValidationProbeError(`validation could not listen on ${addr.local} ports ${opts.outboundPort} or ${opts.inboundPort}`);
  const deadline = Date.now() + opts.timeoutMs;
  const sockets: Socket[] = [];
  let timer: NodeJS.Timeout | undefined;
  const dial = () => {
    const s = connect({ host: addr.passthrough, port: opts.probePort, localAddress: addr.local });
    sockets.push(s);
    s.on('connect', () => {
      if (s.localPort === undefined) return;
      dialled.add(s.localPort);
      check(s.localPort);
    });
    s.on('error', () => undefined);
    s.on('data', () => undefined);
  };
  try {
    const landed = await Promise.race([
      hit,
      new Promise<undefined>((resolve) => {
        const tick = () => {
          if (Date.now() >= deadline) return resolve(undefined);
          dial();
          timer = setTimeout(tick, Math.min(1000, Math.max(0, deadline - Date.now())));
        };
        tick();
      }),
    ]);
    if (landed === undefined) {
      throw new ValidationProbeError(
        `validation failed: a connection to ${addr.passthrough}:${opts.probePort} was not redirected to ${opts.inboundPort} within ${opts.timeoutMs} ms; the capture rules are missing or the process does not run as the proxy UID/GID`,
      );
    }
    log.info({ family: opts.family, landedOn: landed }, 'validation passed');
  } finally {
    if (timer) clearTimeout(timer);
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

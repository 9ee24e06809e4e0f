import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { EnvironmentError } from '../errors.js';

export interface InterfaceAddress {
  readonly address: string;
  readonly family: 'IPv4' | 'IPv6';
  readonly internal: boolean;
}

/** What config loading may read from the machine. Tests pass their own. */
export interface Host {
  /** A text file, or undefined when it does not exist; other errors throw. */
  readText(path: string): string | undefined;
  /** Addresses of the current namespace, or of the namespace at `netns`. */
  interfaceAddresses(netns?: string): InterfaceAddress[];
}

interface IpAddrJson {
  flags?: string[];
  addr_info?: { family?: string; local?: string }[];
}

/** `ip -j address show` output → addresses, IPv4 ones first (the kernel's dump order, which Istio sees). */
export function parseIpAddrJson(text: string): InterfaceAddress[] {
  const links = JSON.parse(text) as IpAddrJson[];
  const all = links.flatMap((l) =>
    (l.addr_info ?? []).map((a) => ({ address: a.local ?? '', family: a.family === 'inet6' ? ('IPv6' as const) : ('IPv4' as const), internal: (l.flags ?? []).includes('LOOPBACK') })),
  );
  return [...all.filter((a) => a.family === 'IPv4'), ...all.filter((a) => a.family === 'IPv6')];
}

export const nodeHost: Host = {
  readText(path) {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  },
  interfaceAddresses(netns) {
    if (netns === undefined) {
      return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => ({ address: a.address, family: a.family, internal: a.internal })));
    }
    try {
      return parseIpAddrJson(execFileSync('nsenter', [`--net=${netns}`, '--', 'ip', '-j', 'address', 'show'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    } catch (err) {
      const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim() || (err as Error).message;
      const line = stderr.split('\n')[0] ?? '';
      if (/^nsenter: (reassociate to namespace|cannot open)/.test(line)) {
        throw new EnvironmentError(`${netns} is not a network namespace meshcap can enter (--netns): ${line}`);
      }
      throw new EnvironmentError(`cannot read the addresses of ${netns} for --ipv6 auto (use --ipv6 on|off): ${line}`);
    }
  },
};

import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';

export interface InterfaceAddress {
  readonly address: string;
  readonly family: 'IPv4' | 'IPv6';
  readonly internal: boolean;
}

/** What config loading may read from the machine. Tests pass their own. */
export interface Host {
  /** A text file, or undefined when it does not exist; other errors throw. */
  readText(path: string): string | undefined;
  interfaceAddresses(): InterfaceAddress[];
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
  interfaceAddresses() {
    return Object.values(networkInterfaces()).flatMap((list) =>
      (list ?? []).map((a) => ({ address: a.address, family: a.family, internal: a.internal })),
    );
  },
};

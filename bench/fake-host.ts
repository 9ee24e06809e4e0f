import type { Host } from '../src/config/host.js';

/** The benchmark's host: no files, no addresses (everything it needs is given as flags). */
export const fakeHostForBench: Host = { readText: () => undefined, interfaceAddresses: () => [] };

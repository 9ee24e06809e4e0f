import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

export default defineConfig({
  // The build bakes package.json's version in; the unit tests see the same value.
  define: { __MESHCAP_VERSION__: JSON.stringify(version) },
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Two cores: root suites that make namespaces run with modest parallelism.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
});

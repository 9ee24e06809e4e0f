import { expect } from 'vitest';
import type { CliResult } from './cli.js';

/** A config error as users see it: exit 2, nothing on stdout, one stderr line naming the field and value. */
export function expectConfigError(res: CliResult, field: string, value: string): void {
  expect(res.code).toBe(2);
  expect(res.stdout).toBe('');
  const lines = res.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(field);
  expect(lines[0]).toContain(value);
  expect(lines[0]).not.toMatch(/\n|    at |internal error/);
}

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { entryCommand, IMPL, REPO_ROOT } from '../../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../../helpers/plan.js';

/**
 * The pictures in docs/trace-and-verify.md are made by the built command itself. This test makes them again
 * and fails when a checked-in file is stale; `UPDATE_DOCS_IMG=1 npx vitest run test/unit/cli/graph-docs.test.ts`
 * writes them anew.
 */
const dir = mkdtempSync(join(tmpdir(), 'meshcap-graph-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SIDECAR = [...ISTIO_INIT_ARGS, '--ipv6', 'off'];

async function meshcap(args: readonly string[]): Promise<string> {
  const { file, args: pre } = entryCommand();
  const r = await execa(file, [...pre, ...args], { stripFinalNewline: false });
  return r.stdout;
}

const PICTURES: readonly { file: string; make: () => Promise<string> }[] = [
  { file: 'docs/img/graph-sidecar.svg', make: () => meshcap(['graph', ...SIDECAR, '--format', 'svg']) },
  {
    file: 'docs/img/trace-app-outbound.svg',
    make: async () => {
      const dump = join(dir, 'pod.save');
      writeFileSync(dump, await meshcap(['-n', ...SIDECAR]));
      return meshcap(['trace', '--rules', dump, '--dst', '203.0.113.10', '--dport', '443', '--uid', '1000', '--format', 'svg']);
    },
  },
];

describe(`the pictures in docs/trace-and-verify.md (${IMPL} build)`, () => {
  it.each(PICTURES)('$file is what the command draws today', async ({ file, make }) => {
    const svg = await make();
    const path = join(REPO_ROOT, file);
    if (process.env['UPDATE_DOCS_IMG'] === '1') writeFileSync(path, svg);
    expect(svg.startsWith('<?xml')).toBe(true);
    expect(readFileSync(path, 'utf8'), `${file} is stale: run UPDATE_DOCS_IMG=1 npx vitest run test/unit/cli/graph-docs.test.ts`).toBe(svg);
    expect(readFileSync(join(REPO_ROOT, 'docs', 'trace-and-verify.md'), 'utf8')).toContain(`(${file.replace('docs/', '')})`);
  });
});

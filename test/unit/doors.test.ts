import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

/**
 * The doors (STYLE.md: the CLI, the CNI plugin, the node agent) sit side by side over one engine: no door
 * imports another, and nothing below the doors imports a door. Read from the sources' own import lines
 * (static, dynamic and require), so a new circle fails here before it fails a build.
 */

const DOORS: Record<string, string> = { 'src/cli/': 'cli', 'cni/': 'cni', 'src/agent/': 'agent' };
/** The process entries choose a door by argv or by the name they run under: they are above every door. */
const ENTRIES = new Set(['src/bin.ts', 'src/main.ts']);

const doorOf = (file: string) => Object.entries(DOORS).find(([prefix]) => file.startsWith(prefix))?.[1];

function sources(dir: string): string[] {
  return readdirSync(resolve(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative module a file imports, as a repo path ending in .ts. */
function importsOf(file: string): string[] {
  const text = readFileSync(resolve(REPO_ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1] ?? '');
  return specs.map((s) => relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), s)).replace(/\.js$/, '.ts'));
}

const files = [...sources('src'), ...sources('cni')];
const edges = files.flatMap((from) => importsOf(from).map((to) => ({ from, to })));

describe('the doors over the one engine', () => {
  it('reads the import lines it judges (a scan that found nothing would prove nothing)', () => {
    expect(edges.some((e) => e.from === 'cni/engine-calls.ts' && e.to === 'src/commands/load.ts')).toBe(true);
    expect(edges.some((e) => e.from === 'src/cli/install-cni.ts' && e.to.startsWith('src/node/install/'))).toBe(true);
  });

  it('has no door importing another door', () => {
    const crossing = edges.filter((e) => !ENTRIES.has(e.from) && doorOf(e.from) !== undefined && doorOf(e.to) !== undefined && doorOf(e.from) !== doorOf(e.to));
    expect(crossing).toEqual([]);
  });

  it('has nothing below the doors importing a door', () => {
    const upward = edges.filter((e) => !ENTRIES.has(e.from) && doorOf(e.from) === undefined && doorOf(e.to) !== undefined);
    expect(upward).toEqual([]);
  });
});

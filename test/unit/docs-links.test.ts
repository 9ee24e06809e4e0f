import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

/** The pages the README's front page hands its long material to. */
const DOC_PAGES = ['sidecar', 'ambient', 'cni', 'operations', 'differences-from-istio', 'testing', 'performance', 'design'] as const;

const README = join(REPO_ROOT, 'README.md');
const DOCS_DIR = join(REPO_ROOT, 'docs');

function markdownFiles(): string[] {
  const docs = existsSync(DOCS_DIR) ? readdirSync(DOCS_DIR).filter((f) => f.endsWith('.md')).map((f) => join(DOCS_DIR, f)) : [];
  return [README, ...docs.sort()];
}

/** Markdown text outside fenced code blocks and inline code spans, where `[x](y)` is not a link. */
function proseOf(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Every `[text](target)` link target, with an optional `"title"` dropped. */
function linkTargets(text: string): string[] {
  return [...proseOf(text).matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
}

function isRelative(target: string): boolean {
  return !/^(https?:|mailto:)/i.test(target) && !target.startsWith('#');
}

/** GitHub's heading anchor: lowercase, only letters, digits, spaces, hyphens and underscores kept, spaces → hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function headingSlugs(file: string): Set<string> {
  const headings = [...proseOf(readFileSync(file, 'utf8').replace(/`([^`\n]*)`/g, '$1')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)];
  return new Set(headings.map((m) => slug(m[1] as string)));
}

/** [linking file, target as written] for every relative link in README.md and docs/*.md. */
const LINKS: [string, string][] = markdownFiles().flatMap((file) =>
  linkTargets(readFileSync(file, 'utf8'))
    .filter(isRelative)
    .map((target): [string, string] => [relative(REPO_ROOT, file), target]),
);

describe('README.md and docs/', () => {
  it('README.md is a front page of at most 150 lines', () => {
    const lines = readFileSync(README, 'utf8').replace(/\n$/, '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(150);
  });

  it.each(DOC_PAGES)('docs/%s.md exists and starts with a title and a link back to the README', (page) => {
    const file = join(DOCS_DIR, `${page}.md`);
    expect(existsSync(file), `docs/${page}.md is missing`).toBe(true);
    const [title, blank, back] = readFileSync(file, 'utf8').split('\n');
    expect(title).toMatch(/^# \S/);
    expect(blank).toBe('');
    expect(back).toMatch(/\]\(\.\.\/README\.md\)/);
  });

  it('the pages hold relative links to check', () => {
    expect(LINKS.length).toBeGreaterThan(20);
  });

  it.each(LINKS)('%s links to %s, which exists', (from, target) => {
    const path = resolve(dirname(join(REPO_ROOT, from)), decodeURI(target.split('#')[0] as string));
    expect(existsSync(path), `${from}: ${target} points at nothing`).toBe(true);
  });

  const anchored = LINKS.filter(([, target]) => /\.md#/.test(target));
  it.each(anchored)('%s links to %s, whose heading exists', (from, target) => {
    const [path, fragment] = target.split('#') as [string, string];
    const file = resolve(dirname(join(REPO_ROOT, from)), decodeURI(path));
    expect([...headingSlugs(file)], `${from}: no heading in ${path} has the slug #${fragment}`).toContain(fragment);
  });

  it('in-page anchors point at a heading of the same page', () => {
    const broken = markdownFiles().flatMap((file) => {
      const slugs = headingSlugs(file);
      return linkTargets(readFileSync(file, 'utf8'))
        .filter((t) => t.startsWith('#') && !slugs.has(t.slice(1)))
        .map((t) => `${relative(REPO_ROOT, file)}: ${t}`);
    });
    expect(broken).toEqual([]);
  });

  it('the slug of a heading follows GitHub', () => {
    expect(slug('Dry-run (-n)')).toBe('dry-run--n');
    expect(slug("Ambient: Istio's node agent")).toBe('ambient-istios-node-agent');
    expect(slug('The node side (meshcap ambient-host)')).toBe('the-node-side-meshcap-ambient-host');
  });
});

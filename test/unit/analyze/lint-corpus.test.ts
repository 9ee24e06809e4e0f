import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseBypassPolicy } from '../../../src/config/bypass-policy.js';
import { describe, expect, it } from 'vitest';
import { CODES } from '../../../src/analyze/codes.js';
import { DEFAULT_LINT_OPTIONS, type LintOptions } from '../../../src/analyze/lint/context.js';
import { lintManifests } from '../../../src/analyze/lint/lint.js';
import { REPO_ROOT } from '../../helpers/paths.js';

/**
 * The lint corpus: every file in test/fixtures/lint/findings names the codes it must produce (`# expect:`),
 * and the options it is linted with (`# options:`), in its header (a JSON file in `<file>.expect`). The files
 * in test/fixtures/lint/clean are realistic manifests that must produce nothing.
 */
const DIR = resolve(REPO_ROOT, 'test', 'fixtures', 'lint');
const findingsDir = resolve(DIR, 'findings');
const cleanDir = resolve(DIR, 'clean');
const manifests = (dir: string) => readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();

interface Case {
  file: string;
  text: string;
  expect: string[];
  /** `# count: N`: how many findings in all (e.g. one per document). */
  count: number | undefined;
  options: LintOptions;
}

function header(file: string, text: string): string {
  const side = `${file}.expect`;
  return existsSync(side) ? readFileSync(side, 'utf8') : text;
}

function readCase(dir: string, name: string): Case {
  const file = resolve(dir, name);
  const text = readFileSync(file, 'utf8');
  const head = header(file, text);
  const expectLine = /^# expect:(.*)$/m.exec(head);
  if (expectLine === null) throw new Error(`${name} has no "# expect:" line`);
  const opts = (/^# options:(.*)$/m.exec(head)?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
  let options: LintOptions = DEFAULT_LINT_OPTIONS;
  for (const o of opts) {
    const [k, v] = o.split('=');
    if (k === 'cni') options = { ...options, cni: true };
    else if (k === 'mode') options = { ...options, mode: v === 'ambient' ? 'ambient' : 'sidecar' };
    else if (k === 'bypass-policy') {
      const policy = parseBypassPolicy(v ?? '');
      if (!policy.ok) throw new Error(`${name}: ${policy.reason}`);
      options = { ...options, bypassPolicy: policy.value };
    } else if (k === 'native-sidecars') options = { ...options, nativeSidecars: v === 'false' ? 'false' : v === 'true' ? 'true' : 'auto' };
    else throw new Error(`${name}: unknown option ${o}`);
  }
  const count = /^# count: (\d+)$/m.exec(head)?.[1];
  return { file: name, text, count: count === undefined ? undefined : Number(count), expect: (expectLine[1] ?? '').trim().split(/\s+/).filter(Boolean).sort(), options };
}

const cases = manifests(findingsDir).map((f) => readCase(findingsDir, f));
const codesOf = (c: Case) => [...new Set(lintManifests([{ file: c.file, text: c.text }], c.options).map((f) => f.code))].sort();

describe('the lint corpus', () => {
  it.each(cases.map((c) => [c.file, c] as const))('%s produces exactly its expected codes', (_name, c) => {
    expect(codesOf(c)).toEqual(c.expect);
    if (c.count !== undefined) expect(lintManifests([{ file: c.file, text: c.text }], c.options)).toHaveLength(c.count);
  });

  it('covers every lint finding MCL001–MCL022', () => {
    const covered = new Set(cases.flatMap((c) => c.expect));
    const all = Object.keys(CODES).filter((c) => c.startsWith('MCL'));
    expect(all).toHaveLength(22);
    expect(all.filter((c) => !covered.has(c))).toEqual([]);
  });

  it('covers every workload kind, in a finding and in the clean set', () => {
    const kinds = (dir: string) => new Set(manifests(dir).flatMap((f) => [...readFileSync(resolve(dir, f), 'utf8').matchAll(/"?kind"?:\s*"?(\w+)/g)].map((m) => m[1])));
    for (const dir of [findingsDir, cleanDir]) {
      const seen = kinds(dir);
      for (const kind of ['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob']) expect(seen, `${kind} in ${dir}`).toContain(kind);
    }
  });
});

describe('a clean, realistic corpus', () => {
  const files = manifests(cleanDir).map((f) => ({ file: f, text: readFileSync(resolve(cleanDir, f), 'utf8') }));

  it('produces no findings with the default options', () => {
    expect(lintManifests(files, DEFAULT_LINT_OPTIONS)).toEqual([]);
  });

  it('produces no findings with the CNI plugin and native sidecars', () => {
    expect(lintManifests(files, { ...DEFAULT_LINT_OPTIONS, cni: true, nativeSidecars: 'true' })).toEqual([]);
  });
});

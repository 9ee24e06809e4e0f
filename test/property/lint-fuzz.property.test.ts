import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_LINT_OPTIONS } from '../../src/analyze/lint/context.js';
import { lintManifests } from '../../src/analyze/lint/lint.js';
import { ManifestSyntaxError } from '../../src/analyze/lint/manifests.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SCALE, SEED } from './arbitraries.js';

/**
 * Fuzzed manifests never crash lint: every input either lints (a list of findings) or is refused as
 * unreadable, naming the file and a line inside it. Inputs: corpus files with random edits, random YAML-ish
 * text, and well-formed YAML whose fields hold random values of any type.
 */
const CORPUS = resolve(REPO_ROOT, 'test', 'fixtures', 'lint');
const corpus = ['findings', 'clean'].flatMap((d) => readdirSync(resolve(CORPUS, d)).filter((f) => /\.(ya?ml|json)$/.test(f)).map((f) => readFileSync(resolve(CORPUS, d, f), 'utf8')));

const YAML_BITS = ['\n', ' ', '  ', '- ', ': ', '---\n', '{', '}', '[', ']', ',', '"', "'", '&a ', '*a', '!!str ', '|\n', '>\n', '#', '\t', 'kind: Pod\n', 'spec:\n', 'containers:\n', 'securityContext: ', 'runAsUser: 1337', '%YAML 1.2\n', '? ', '\\u0000', '0x1F', '~', 'null'];
const yamlish = fc.array(fc.oneof(fc.constantFrom(...YAML_BITS), fc.string({ maxLength: 6 })), { maxLength: 60 }).map((parts) => parts.join(''));

/** A corpus file with a few random edits (insert, delete or replace a span). */
const mutated = fc
  .tuple(fc.constantFrom(...corpus), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 8 }), fc.oneof(fc.constantFrom(...YAML_BITS), fc.string({ maxLength: 4 }))), { minLength: 1, maxLength: 4 }))
  .map(([text, edits]) => edits.reduce((t, [at, del, ins]) => {
    const i = at % (t.length + 1);
    return t.slice(0, i) + ins + t.slice(i + del);
  }, text));

/** Well-formed documents of every workload kind whose fields hold anything at all. */
const KINDS = ['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'List', 'Namespace'];
const anyValue = fc.anything({ maxDepth: 3, withNullPrototype: true, withObjectString: true });
const structured = fc
  .record({ kind: fc.constantFrom(...KINDS), metadata: anyValue, spec: fc.oneof(anyValue, fc.record({ template: fc.record({ metadata: anyValue, spec: anyValue }), containers: fc.array(anyValue, { maxLength: 3 }), securityContext: anyValue })), items: anyValue })
  .map((doc) => {
    try {
      return JSON.stringify(doc) ?? '';
    } catch {
      return '';
    }
  });

const tried = { lints: 0, refused: 0 };
/** Lint prints nothing of its own on stderr: the YAML library's process warnings are off. */
const warnings: string[] = [];
process.on('warning', (w) => warnings.push(w.message));

function lintOrRefuse(text: string): void {
  const lines = text.split('\n').length;
  try {
    const findings = lintManifests([{ file: 'fuzz.yaml', text }], DEFAULT_LINT_OPTIONS);
    expect(Array.isArray(findings)).toBe(true);
    tried.lints++;
  } catch (err) {
    if (!(err instanceof ManifestSyntaxError)) throw err;
    expect(err.file).toBe('fuzz.yaml');
    expect(err.line).toBeGreaterThanOrEqual(1);
    expect(err.line).toBeLessThanOrEqual(lines + 1);
    tried.refused++;
  }
}

describe(`property: fuzzed manifests never crash lint (seed ${SEED})`, () => {
  const runs = (n: number) => ({ seed: SEED, numRuns: Math.round(n * SCALE) });

  it('lints or refuses corpus files with random edits', () => {
    fc.assert(fc.property(mutated, (t) => lintOrRefuse(t)), runs(1500));
  });

  it('lints or refuses random YAML-like text', () => {
    fc.assert(fc.property(yamlish, (t) => lintOrRefuse(t)), runs(1500));
  });

  it('lints well-formed documents whose fields hold values of any type', () => {
    fc.assert(fc.property(structured, (t) => lintOrRefuse(t)), runs(1000));
  });

  const dir = mkdtempSync(join(tmpdir(), 'meshcap-lint-fuzz-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 0, 1 or 2 from the command line, and 2 names the file and the line', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutated, yamlish), async (text) => {
        const file = join(dir, 'input.yaml');
        writeFileSync(file, text);
        const res = await runCli(['lint', file]);
        expect([0, 1, 2]).toContain(res.code);
        if (res.code === 2) expect(res.stderr).toMatch(new RegExp(`^meshcap: invalid manifest ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line \\d+: .+\\n$`));
        else expect(res.stdout).toMatch(/(no findings|\d+ findings?: .*)\n$/);
      }),
      runs(200),
    );
    console.log(`fuzzed manifests: ${tried.lints} linted, ${tried.refused} refused with a line`);
    expect(warnings).toEqual([]);
  });
});

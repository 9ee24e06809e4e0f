import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { expectConfigError } from '../../helpers/errors.js';
import { entryCommand, REPO_ROOT } from '../../helpers/paths.js';

const FIX = resolve(REPO_ROOT, 'test', 'fixtures', 'lint');
const finding = (name: string) => resolve(FIX, 'findings', name);
const CLEAN = ['bookstore.yaml', 'database.yaml', 'batch.json', 'platform.yaml'].map((f) => resolve(FIX, 'clean', f));

describe('meshcap lint', () => {
  it('exits 0 and prints only the summary for a clean corpus', async () => {
    const res = await runCli(['lint', ...CLEAN]);
    expect(res).toMatchObject({ code: 0, stdout: 'no findings\n', stderr: '' });
  });

  it('prints one istioctl-style line per finding and a summary, and exits 1', async () => {
    const res = await runCli(['lint', finding('mcl001-pod-level-uid.yaml')]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe(
      'Error [MCL001] (Deployment orders, container app) container app runs as uid 1337, which capture exempts; its outbound traffic bypasses the proxy\n' +
        '1 finding: 1 error, 0 warnings, 0 info\n',
    );
  });

  it('reports findings as JSON with the file, kind, name and container', async () => {
    const file = finding('mcl002-gid.yaml');
    const res = await runCli(['lint', '--json', file]);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toEqual({
      findings: [{ code: 'MCL002', severity: 'error', message: 'container redis runs with gid 1337, which capture exempts', file, line: 2, kind: 'StatefulSet', name: 'cache', container: 'redis' }],
    });
  });

  it('exits 0 when every finding is below --fail-on, and 1 when one reaches it', async () => {
    const warningsOnly = finding('mcl010-exclude-ignored.yaml');
    expect((await runCli(['lint', warningsOnly])).code).toBe(1);
    expect((await runCli(['lint', '--fail-on', 'error', warningsOnly])).code).toBe(0);
    const infoOnly = finding('mcl019-tproxy.yaml');
    expect((await runCli(['lint', infoOnly])).code).toBe(0);
    expect((await runCli(['lint', '--fail-on=info', infoOnly])).code).toBe(1);
  });

  it('uses --proxy-uid, --mode and --cni', async () => {
    const file = finding('mcl001-pod-level-uid.yaml');
    expect((await runCli(['lint', '--proxy-uid', '2102', file])).stdout).toBe('no findings\n');
    expect((await runCli(['lint', '--mode', 'ambient', file])).stdout).toBe('no findings\n');
    const restricted = finding('mcl020-restricted.yaml');
    expect((await runCli(['lint', restricted])).stdout).toContain('[MCL020]');
    expect((await runCli(['lint', '--cni', restricted])).stdout).toBe('no findings\n');
  });

  it('names the file and the line of unparsable YAML, and exits 2', async () => {
    const file = resolve(FIX, 'broken.yaml');
    const res = await runCli(['lint', CLEAN[0]!, file]);
    expectConfigError(res, `manifest ${file}`, 'line 5');
  });

  it.each([
    [['lint', '--fail-on', 'fatal', CLEAN[0]!], '--fail-on', 'fatal'],
    [['lint', '--proxy-uid', 'istio', CLEAN[0]!], '--proxy-uid', 'istio'],
    [['lint', '--mode', 'tproxy', CLEAN[0]!], '--mode', 'tproxy'],
    [['lint', '--native-sidecars', 'yes', CLEAN[0]!], '--native-sidecars', 'yes'],
    [['lint', '--bogus', CLEAN[0]!], 'command line', '--bogus'],
    [['lint', '/nonexistent/deploy.yaml'], 'manifest /nonexistent/deploy.yaml', 'no such file'],
  ])('refuses %j with exit 2 naming the flag', async (argv, field, value) => {
    expectConfigError(await runCli(argv), field, value);
  });

  it('reads "-" from stdin, in the built program', async () => {
    const { file, args } = entryCommand();
    const input = readFileSync(finding('mcl005-hostnetwork.yaml'), 'utf8');
    const res = await execa(file, [...args, 'lint', '--json', '-'], { input, reject: false });
    expect(res.exitCode).toBe(1);
    expect((JSON.parse(res.stdout) as { findings: { code: string; file: string }[] }).findings.map((f) => [f.code, f.file])).toEqual([['MCL005', '-']]);
    const broken = await execa(file, [...args, 'lint', '-'], { input: 'kind: Pod\nspec: [\n', reject: false });
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toMatch(/^meshcap: invalid manifest stdin: line \d+: /);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { entryCommand } from '../../helpers/paths.js';
import { ISTIO_INIT_ARGS } from '../../helpers/plan.js';
import { REPO_ROOT } from '../../helpers/paths.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('dry-run output', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'meshcap-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('DRY_RUN_FILE_PATH receives the Istio framing and is truncated first', async () => {
    const file = join(dir, 'out.txt');
    writeFileSync(file, 'x'.repeat(100_000));
    const res = await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'off'], { DRY_RUN_FILE_PATH: file });
    expect(res.code).toBe(0);
    const written = readFileSync(file, 'utf8');
    expect(written.startsWith('iptables-save\nip6tables-save\n* nat\n')).toBe(true);
    expect(written.endsWith('COMMIT\niptables-save\n')).toBe(true);
    expect(res.stdout.startsWith('# iptables-save\n*nat\n')).toBe(true);
  });

  it('writes nothing but the product on stdout, logs on stderr as JSON', async () => {
    const res = await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'off']);
    expect(res.stdout.split('\n').every((l) => l === '' || l.startsWith('#') || l.startsWith('*') || l.startsWith(':') || l.startsWith('-A') || l === 'COMMIT')).toBe(true);
    const log = JSON.parse(res.stderr.trim().split('\n')[0] ?? '{}') as Record<string, unknown>;
    expect(log).toMatchObject({ msg: 'planned rules', mode: 'sidecar', level: 30 });
  });

  it('maps --log_output_level onto the logger, and --log-format pretty prints lines for people', async () => {
    const quiet = await runCli(['-n', '--log_output_level=default:error', '--log_as_json']);
    expect(quiet.stderr).toBe('');
    const pretty = await runCli(['-n', '--log-format', 'pretty', '--ipv6', 'off']);
    expect(pretty.stderr).toMatch(/^INFO  planned rules mode=sidecar families=\["ipv4"\]/);
  });

  it("accepts Istio's other logging flags", async () => {
    const res = await runCli(['-n', '--log_caller=default', '--log_stacktrace_level', 'default:none', '--log_target=stdout']);
    expect(res.code).toBe(0);
  });

  it('warns about inputs Istio silently ignores', async () => {
    const res = await runCli(['-n', '-b', '8080', '-d', '15021']);
    expect(res.stderr).toContain('--istio-local-exclude-ports is ignored');
  });

  it('--help prints usage on stdout and exits 0', async () => {
    const res = await runCli(['--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('--istio-service-cidr');
  });

  it.each([
    [[], 'sidecar'],
    [['istio-iptables'], 'sidecar'],
    [['ambient'], 'ambient'],
    [['ambient-host'], 'ambient'],
  ])('help of %j names its docs page, and the page exists', async (prefix, page) => {
    const res = await runCli([...prefix, '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`docs/${page}.md`);
    expect(readFileSync(join(REPO_ROOT, 'docs', `${page}.md`), 'utf8')).toMatch(/^# /);
  });

  it('runs no command at all on a dry-run', async () => {
    const res = await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'on']);
    expect(res.code).toBe(0);
    expect(res.commands).toEqual([]);
  });
});

describe('the built entry point (node bundle, or the executable with MESHCAP_IMPL=bin)', () => {
  it('runs without root, iptables or a non-loopback address', async () => {
    const { file, args } = entryCommand();
    const r = await execa(file, [...args, '-n', ...ISTIO_INIT_ARGS], {
      reject: false,
      env: { PATH: '/nonexistent' },
      extendEnv: false,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('-A ISTIO_INBOUND -p tcp -j ISTIO_IN_REDIRECT');
  });

  it.each(['--version', '-V'])('%s prints `meshcap <package.json version>` and exits 0', async (flag) => {
    const { file, args } = entryCommand();
    const r = await execa(file, [...args, flag], { reject: false });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(`meshcap ${PACKAGE_VERSION}`);
  });

  it('exits 0 without a stack trace when its reader goes away early (`meshcap -n | head -c1`)', async () => {
    const { file, args } = entryCommand();
    // Far more than a pipe buffer (3,000 excluded IPv6 CIDRs) and a reader that closes after one byte.
    const cidrs = Array.from({ length: 3000 }, (_, i) => `2001:db8::${(i + 1).toString(16)}/128`).join(',');
    const cmd = [file, ...args, '-n', ...ISTIO_INIT_ARGS, '-x', cidrs, '--ipv6', 'on', '--log_output_level', 'default:none'].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const r = await execa('bash', ['-o', 'pipefail', '-c', `${cmd} | head -c1 >/dev/null`], { reject: false });
    expect(r.stderr).not.toContain('EPIPE');
    expect(r.exitCode).toBe(0);
  });

  it('exits 2 on bad input with one line on stderr', async () => {
    const { file, args } = entryCommand();
    const r = await execa(file, [...args, '-n', '-p', '0'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('`meshcap istio-iptables …` (as `pilot-agent istio-iptables …`)', () => {
  it('is sidecar mode with the same output', async () => {
    const plain = await runCli(['-n', ...ISTIO_INIT_ARGS, '--ipv6', 'off']);
    const named = await runCli(['istio-iptables', '-n', ...ISTIO_INIT_ARGS, '--ipv6', 'off', '--log_caller=default']);
    expect(named.code).toBe(0);
    expect(named.stdout).toBe(plain.stdout);
  });
});

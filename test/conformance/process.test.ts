import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_DIR, IMPL, entryCommand } from '../helpers/paths.js';
import { AMBIENT_CASES, AMBIENT_TPROXY_CASES } from './ambient-cases.js';
import { CAPTURE_CASES, CNI_CASES } from './sidecar-cases.js';

/**
 * The goldens again, through the built program as a process (the node bundle, or with MESHCAP_IMPL=bin the
 * self-contained executable): a bundling or runtime difference cannot hide behind the in-process suite.
 */
const cases = [
  ...CAPTURE_CASES.map((c) => ({ ...c, file: `sidecar/${c.golden}.golden`, blocksOnly: false })),
  ...CNI_CASES.map((c) => ({ ...c, file: `sidecar/cni-plugin/${c.golden}.txt.golden`, blocksOnly: true })),
  ...AMBIENT_CASES.map((c) => ({ ...c, file: `ambient/${c.golden}.golden`, blocksOnly: false })),
  ...AMBIENT_TPROXY_CASES.map((c) => ({ ...c, file: `ambient/${c.golden}.golden`, blocksOnly: true })),
];

describe(`every golden through the ${IMPL} build as a process`, () => {
  it.each(cases)('$file', async (c) => {
    const { file, args } = entryCommand();
    const r = await execa(file, [...args, ...c.argv, '--dry-run-format', 'istio'], { reject: false, env: { ...c.env }, extendEnv: false });
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trim().split('\n').filter((l) => !c.blocksOnly || (l !== 'iptables-save' && l !== 'ip6tables-save'));
    expect(lines.join('\n')).toBe(readFileSync(join(CONFORMANCE_DIR, c.file), 'utf8').trim());
  });
});

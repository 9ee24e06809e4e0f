import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_DIR, IMPL, entryCommand } from '../helpers/paths.js';
import { NFT_AMBIENT_CASES, NFT_SIDECAR_CASES } from './nft-cases.js';

/**
 * Istio's native nftables goldens (28 sidecar, 14 ambient), byte for byte — every line, the final newline
 * and ambient's double spaces included — through the built program as a process.
 */
const cases = [
  ...NFT_SIDECAR_CASES.map((c) => ({ ...c, file: `sidecar/nftables/${c.golden}.golden` })),
  ...NFT_AMBIENT_CASES.map((c) => ({ ...c, file: `ambient/nftables/${c.golden}.golden` })),
];

const goldenNames = (dir: string) => readdirSync(join(CONFORMANCE_DIR, dir)).filter((f) => f.endsWith('.golden')).map((f) => f.replace(/\.golden$/, '')).sort();

describe(`Istio's nft goldens through the ${IMPL} build as a process`, () => {
  it('covers every nft golden kept in the repo, 28 sidecar and 14 ambient', () => {
    expect(NFT_SIDECAR_CASES.map((c) => c.golden).sort()).toEqual(goldenNames('sidecar/nftables'));
    expect(NFT_AMBIENT_CASES.map((c) => c.golden).sort()).toEqual(goldenNames('ambient/nftables'));
    expect(cases).toHaveLength(42);
  });

  it.each(cases)('prints $file byte for byte with --dry-run-format istio', async (c) => {
    const { file, args } = entryCommand();
    const r = await execa(file, [...args, ...c.argv, '--dry-run-format', 'istio'], { reject: false, env: { ...c.env }, extendEnv: false, stripFinalNewline: false });
    expect(r.stderr).not.toMatch(/"level":50/);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(readFileSync(join(CONFORMANCE_DIR, c.file), 'utf8'));
  });
});

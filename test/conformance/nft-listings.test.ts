import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeHost, runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { NFT_AMBIENT_CASES, NFT_SIDECAR_CASES } from './nft-cases.js';

/**
 * The save-format dry-run against nft 1.0.6's recorded listings of every golden (nft-listings/PROVENANCE.md).
 * The group cases resolve `java`/`ftp` through the same group database the recording used.
 */
const DIR = join(REPO_ROOT, 'test', 'conformance', 'nft-listings');
const GROUPS = fakeHost({ files: { '/etc/group': 'java:x:2001:\nftp:x:2002:\n' } });
const listing = (path: string) => readFileSync(join(DIR, path), 'utf8');

const cases = [
  ...NFT_SIDECAR_CASES.map((c) => ({ ...c, file: `sidecar/${c.golden}.list` })),
  ...NFT_AMBIENT_CASES.filter((c) => c.golden !== 'hostprobe').map((c) => ({ ...c, file: `ambient/${c.golden}.list` })),
];

describe("the save-format dry-run equals nft 1.0.6's listing of each golden", () => {
  it.each(cases)('$file', async (c) => {
    const res = await runCli([...c.argv], c.env ?? {}, GROUPS);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(listing(c.file));
  });

  it('lists only the IPv4 probe set for the IPv4-only node side (the recording also made the IPv6 one)', async () => {
    const host = NFT_AMBIENT_CASES.find((c) => c.golden === 'hostprobe');
    const res = await runCli([...(host?.argv ?? [])]);
    expect(res.code).toBe(0);
    const withoutV6Set = listing('ambient/hostprobe.list').replace(/\tset istio-inpod-probes-v6 \{\n[^}]*\}\n\n/, '');
    expect(withoutV6Set).not.toContain('probes-v6');
    expect(res.stdout).toBe(withoutV6Set);
  });
});

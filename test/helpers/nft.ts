import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { entryCommand } from './paths.js';
import type { Netns } from './netns.js';

/** `nft -s list ruleset` inside a namespace (stateless: counters without values). */
export async function nftListing(ns: Netns, extra: readonly string[] = ['-s']): Promise<string> {
  const r = await ns.run('nft', [...extra, 'list', 'ruleset']);
  return r.stdout === '' ? '' : `${r.stdout}\n`;
}

/**
 * Runs the built meshcap; with `groups`, inside a private mount namespace whose /etc/group is a throwaway
 * copy holding these extra groups (bind-mounted, gone with the process), so meshcap and the nft it starts
 * both resolve the group names. The machine's /etc/group is never written.
 */
export async function meshcapWithGroups(args: readonly string[], env: Record<string, string>, groups?: string) {
  const { file, args: pre } = entryCommand();
  if (groups === undefined) return execa(file, [...pre, ...args], { reject: false, env, stripFinalNewline: false });
  const dir = mkdtempSync(join(tmpdir(), 'mcgrp-'));
  try {
    const path = join(dir, 'group');
    writeFileSync(path, readFileSync('/etc/group', 'utf8') + groups);
    const script = 'mount --bind "$0" /etc/group && exec "$@"';
    return await execa('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, path, file, ...pre, ...args], { reject: false, env, stripFinalNewline: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** GIDs no Debian base system uses, for the `java`/`ftp` goldens. */
export const THROWAWAY_GROUPS = 'java:x:46001:\nftp:x:46002:\n';

import { PlanError } from '../errors.js';
import { ownedNftTables, PROBE_SET_COMMENT, PROBE_SETS, type NftMode } from '../model/nft/layout.js';
import type { Plan } from '../model/plan.js';
import { renderNftTableIstio, type NftTableBlock } from './nft-transaction.js';
import type { NftSetListing } from './nft-listing.js';

/**
 * The transaction meshcap applies (one `nft -f -`), derived from the same blocks as Istio's text.
 * Pod modes: every table the mode may own is deleted first (`add` then `delete`, so an absent table is no
 * error), then Istio's blocks re-create the ones this config needs — in one transaction, so a config that
 * needs fewer tables or chains leaves none of the old ones (Istio's §7.1 residue) and a changed base-chain
 * spec cannot fail (§7.2). The node side keeps its table, which holds the probe sets: sets first, the
 * rules (Istio's flush keeps sets and elements), then the element changes.
 */

const table = (name: string) => `inet ${name}`;
/** Set element comments come from the CNI attachment (`<containerID>/<ifname>`): never quotes or spaces. */
const SAFE_COMMENT = /^[A-Za-z0-9_.:/@+-]{1,128}$/;

export function probeSets(plan: Plan): NftSetListing[] {
  return plan.families.map((family) => {
    const ipset = plan.ipsets.find((s) => s.family === family);
    const elements = (ipset?.add ?? []).map((a) => ({ text: a.ip, comment: a.comment }));
    return { ...PROBE_SETS[family], comment: PROBE_SET_COMMENT, elements };
  });
}

function elementLines(plan: Plan, tableName: string): string[] {
  const lines: string[] = [];
  for (const s of plan.ipsets) {
    const set = `${table(tableName)} ${PROBE_SETS[s.family].name}`;
    for (const ip of s.remove) lines.push(`add element ${set} { ${ip} }`, `delete element ${set} { ${ip} }`);
    for (const a of s.add) {
      if (a.comment !== undefined && !SAFE_COMMENT.test(a.comment)) throw new PlanError(`set element comment ${JSON.stringify(a.comment)} is not safe for nft`);
      // add + delete + add replaces an element, comment included (`add element` alone keeps the old one).
      const comment = a.comment === undefined ? '' : ` comment "${a.comment}"`;
      lines.push(`add element ${set} { ${a.ip} }`, `delete element ${set} { ${a.ip} }`, `add element ${set} { ${a.ip}${comment} }`);
    }
  }
  return lines;
}

function hostLines(plan: Plan, blocks: readonly NftTableBlock[]): string[] {
  const [block] = blocks;
  if (block === undefined) throw new PlanError('the node side plan has no nft rules');
  const name = block.layout.name;
  const sets = probeSets(plan).map((s) => `add set ${table(name)} ${s.name} { type ${s.type} ; comment "${PROBE_SET_COMMENT}" ; }`);
  const [add, ...rest] = renderNftTableIstio(block, 'applied');
  return [add ?? '', ...sets, ...rest, ...elementLines(plan, name)];
}

/**
 * `present`, when the caller read the namespace first, names the tables of ours that exist: only those are
 * deleted. A transaction that destroys nothing is about 9 ms cheaper in the kernel (bench:nft), which is
 * what a first apply into an empty namespace then gets.
 */
export function renderNftApply(mode: NftMode, plan: Plan, blocks: readonly NftTableBlock[], present?: ReadonlySet<string>): string {
  const lines = mode === 'ambient-host' ? hostLines(plan, blocks) : [...renderNftCleanupLines(mode, present), ...blocks.flatMap((b) => renderNftTableIstio(b, 'applied'))];
  return `${lines.join('\n')}\n`;
}

function renderNftCleanupLines(mode: NftMode, present?: ReadonlySet<string>): string[] {
  return ownedNftTables(mode)
    .filter((t) => present === undefined || present.has(t))
    .flatMap((t) => [`add table ${table(t)}`, `delete table ${table(t)}`]);
}

/** `--cleanup-only`: deletes exactly the tables the mode owns (the node side's with its sets). */
export function renderNftCleanup(mode: NftMode): string {
  return `${renderNftCleanupLines(mode).join('\n')}\n`;
}

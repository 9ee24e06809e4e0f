import type { Plan } from '../model/plan.js';
import { renderRestoreLines } from './restore.js';

const saveCommand = { ipv4: 'iptables-save', ipv6: 'ip6tables-save' } as const;

/**
 * Istio's dry-run output (the goldens, and what DRY_RUN_FILE_PATH receives): the state probes
 * `iptables-save` and `ip6tables-save` (always both), each family's restore input, then — in sidecar mode,
 * not in ambient's — the final-state dumps of the families that got rules (CASES.md §1).
 */
export function renderIstioDryRun(plan: Plan, opts: { finalSaves: boolean } = { finalSaves: true }): string {
  const lines: string[] = [saveCommand.ipv4, saveCommand.ipv6];
  for (const family of plan.families) lines.push(...renderRestoreLines(plan, family));
  if (opts.finalSaves) for (const family of plan.families) lines.push(saveCommand[family]);
  return `${lines.join('\n')}\n`;
}

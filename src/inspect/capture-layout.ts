import { AmbientChain, AmbientMark } from '../model/names.js';
import { isRecordChain } from '../model/ownership.js';
import type { InspectedClause, ParsedTable } from './types.js';

/** Whose capture rules a ruleset holds: ambient's in-pod rules, ambient's node rules, or (else) a sidecar's. */
export type CaptureLayout = 'ambient' | 'ambient-host' | 'sidecar';

const isZtunnelMark = (c: InspectedClause) => (c.k === 'mark' || c.k === 'connmark') && c.mark === AmbientMark.ztunnel && c.mask === AmbientMark.mask;

/**
 * The layout of one backend's tables, for trace and precheck alike: ambient in-pod when a table declares
 * ISTIO_PRERT or a rule (ownership records aside) matches ztunnel's socket mark 0x539/0xfff; ambient's node
 * rules when a table declares ISTIO_POSTRT; else sidecar.
 */
export function detectLayout(tables: readonly ParsedTable[]): CaptureLayout {
  const declares = (chain: string) => tables.some((t) => t.chains.some((c) => c.name === chain));
  const marksZtunnel = tables.some((t) => t.rules.some((r) => !isRecordChain(r.chain) && r.match.some(isZtunnelMark)));
  if (declares(AmbientChain.prerouting) || marksZtunnel) return 'ambient';
  return declares(AmbientChain.postrouting) ? 'ambient-host' : 'sidecar';
}

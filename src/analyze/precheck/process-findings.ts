import { describeCode } from '../codes.js';
import type { Finding } from '../findings.js';
import { exemptOwners } from './rules-view.js';
import { PROXY_COMMS, type NamespaceState } from './state.js';

/** Processes other than the proxy whose socket credentials the outbound rules exempt (MCP020, MCP021). */
export function checkProcesses(state: NamespaceState): Finding[] {
  const uids = exemptOwners(state.rules, 'uid');
  const gids = exemptOwners(state.rules, 'gid');
  const out: Finding[] = [];
  for (const p of state.processes) {
    if (PROXY_COMMS.has(p.comm)) continue;
    if (uids.has(p.fsuid)) out.push({ ...describeCode('MCP020', { comm: p.comm, pid: p.pid, uid: p.fsuid }), pid: p.pid });
    if (gids.has(p.fsgid)) out.push({ ...describeCode('MCP021', { comm: p.comm, pid: p.pid, gid: p.fsgid }), pid: p.pid });
  }
  return out;
}

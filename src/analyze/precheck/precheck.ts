import type { Finding } from '../findings.js';
import { checkProcesses } from './process-findings.js';
import { checkRules } from './rules-findings.js';
import { checkSockets } from './socket-findings.js';
import type { NamespaceState, PrecheckOptions } from './state.js';

/** `meshcap precheck`: the findings of §5 for one namespace's state. Pure. */
export function analyzeNamespace(state: NamespaceState, options: PrecheckOptions): Finding[] {
  return [...checkRules(state), ...checkSockets(state, options), ...checkProcesses(state)];
}

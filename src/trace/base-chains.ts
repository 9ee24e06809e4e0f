import type { Family } from '../model/cidr.js';
import type { ParsedTable } from '../inspect/types.js';

/** A kernel hook a first packet passes, named as iptables names its builtin chains. */
export type Hook = 'PREROUTING' | 'INPUT' | 'OUTPUT' | 'POSTROUTING';

/** One chain the kernel enters on a hook: an iptables builtin chain or an nft base chain. */
export interface BaseChain {
  readonly table: ParsedTable;
  /** The chain the hook enters (`OUTPUT`; an nft base chain's own name). */
  readonly entry: string;
  readonly hook: Hook;
  readonly priority: number;
  /** A nat chain: it sees only a tracked connection's first packet, until a nat binding is made. */
  readonly nat: boolean;
}

/** The kernel's priorities of iptables' tables per hook (NF_IP_PRI_*); nat runs as DNAT before, SNAT after. */
const IPTABLES_PRIORITY: Record<string, Partial<Record<Hook, number>>> = {
  raw: { PREROUTING: -300, OUTPUT: -300 },
  mangle: { PREROUTING: -150, INPUT: -150, OUTPUT: -150, POSTROUTING: -150 },
  nat: { PREROUTING: -100, OUTPUT: -100, INPUT: 100, POSTROUTING: 100 },
  filter: { INPUT: 0, OUTPUT: 0 },
};

const HOOKS: Record<string, Hook> = { prerouting: 'PREROUTING', input: 'INPUT', output: 'OUTPUT', postrouting: 'POSTROUTING' };

function listBaseChains(t: ParsedTable): BaseChain[] {
  if (t.label === undefined) {
    return Object.entries(IPTABLES_PRIORITY[t.table] ?? {}).map(([hook, priority]) => ({ table: t, entry: hook, hook: hook as Hook, priority, nat: t.table === 'nat' }));
  }
  return t.chains.flatMap((c) => {
    const hook = c.base === undefined ? undefined : HOOKS[c.base.hook];
    return c.base === undefined || hook === undefined ? [] : [{ table: t, entry: c.name, hook, priority: c.base.priority, nat: c.base.type === 'nat' }];
  });
}

/**
 * Every chain the kernel enters for one family, in its order on each hook: by priority, and in the order the
 * tables were given where priorities tie (iptables' tables before native nft ones, as the callers pass them).
 */
export function orderBaseChains(tables: readonly ParsedTable[], family: Family): BaseChain[] {
  const all = tables.filter((t) => t.family === family).flatMap(listBaseChains);
  return all.map((c, i) => ({ c, i })).sort((a, b) => a.c.priority - b.c.priority || a.i - b.i).map(({ c }) => c);
}

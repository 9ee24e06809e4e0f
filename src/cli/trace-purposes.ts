import type { Host } from '../config/host.js';
import { formatSaveSpec } from '../render/spec.js';
import { rulesFor } from '../model/chains.js';
import { parseRuleSpec, tokenize } from '../inspect/rule-spec.js';
import type { InspectedClause, ParsedRule } from '../inspect/types.js';
import { appliedRules } from '../model/ownership.js';
import { nftChainName } from '../model/nft/layout.js';
import type { Plan } from '../model/plan.js';
import type { Family, Rule } from '../model/rule.js';
import { spellNftRule } from '../render/nft-spell.js';
import { kernelRuleText, type NftRenderOptions } from '../render/nft-transaction.js';
import { buildProgram, isModeCommand } from './program.js';
import { loadCommand } from '../commands/load.js';

/** Configs that between them emit every kind of rule meshcap makes (sidecar both modes, ambient both layouts). */
const CATALOGUE: readonly (readonly string[])[] = [
  ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020', '--ipv6', 'on'],
  ['-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-m', 'TPROXY', '-b', '*', '-x', '192.0.2.0/24', '-i', '*', '-d', '15020', '-o', '15020', '-c', 'eth9', '-k', 'eth8', '--drop-invalid', '--redirect-dns', '--capture-all-dns', '--ipv6', 'on'],
  ['-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-b', '8080', '-q', '9090', '-i', '198.51.100.0/24', '-x', '192.0.2.0/24', '--redirect-dns', '--dns-servers', '192.0.2.53', '--ipv6', 'off'],
  ['ambient', '--inbound', 'redirect', '--redirect-dns', '--virtual-interfaces', 'eth8', '--ipv6', 'on'],
  ['ambient', '--inbound', 'tproxy', '--redirect-dns', '--ipv6', 'on'],
  ['ambient-host', '--ipv6', 'on'],
];

const quietHost: Host = { readText: () => undefined, interfaceAddresses: () => [] };

/** A rule's shape without its values: which clauses (and negations) lead to which target. */
function shapeOf(r: Pick<ParsedRule, 'family' | 'table' | 'chain' | 'match' | 'target'>): string {
  const clause = (c: InspectedClause) => `${c.k}${'not' in c && c.not ? '!' : ''}${'dir' in c ? `:${String(c.dir)}` : ''}${'kind' in c ? `:${c.kind}` : ''}${c.k === 'in' || c.k === 'out' ? `:${c.iface}` : ''}`;
  const t = r.target;
  return [r.table, r.chain, ...r.match.map(clause), t.k === 'jump' ? t.chain : t.k].join(' ');
}

/** The plans whose rules name purposes, with the mode their nft spelling takes (none: no nft key). */
export interface PlanPurposes {
  readonly plan: Plan;
  readonly nft: NftRenderOptions | undefined;
}

function recordPurposes({ plan, nft: nftOptions }: PlanPurposes, exact: Map<string, string>, shapes: Map<string, string>): void {
  for (const family of plan.families) {
    for (const rule of rulesFor(appliedRules(plan), family)) {
      const spec = formatSaveSpec(rule, family).join(' ');
      const { match, target } = parseRuleSpec(tokenize(spec));
      const key = `${family} ${rule.table} ${rule.chain} ${spec}`;
      if (!exact.has(key)) exact.set(key, rule.purpose);
      const shape = shapeOf({ family, table: rule.table, chain: rule.chain, match, target });
      if (!shapes.has(shape)) shapes.set(shape, rule.purpose);
      const nft = nftOptions === undefined ? undefined : nftKey(rule, family, nftOptions);
      if (nft !== undefined && !exact.has(nft)) exact.set(nft, rule.purpose);
    }
  }
}

/** The catalogue's plans of one layout (the layouts share spellings, `-A OUTPUT -j ISTIO_OUTPUT`: only the traced layout's configs name purposes). */
function catalogueOf(layout: 'sidecar' | 'ambient'): PlanPurposes[] {
  const program = buildProgram({ out: () => undefined, err: () => undefined });
  return CATALOGUE.filter((a) => (a[0]?.startsWith('ambient') ? 'ambient' : 'sidecar') === layout).flatMap((argv) => {
    const parsed = program.parse(reorder(argv));
    if (!isModeCommand(parsed)) return [];
    // ambient-host's and ambient TPROXY's rules have no nft spelling of their own to key on.
    const nft = argv[0] === 'ambient-host' || (layout === 'ambient' && argv.includes('tproxy')) ? undefined : { mode: layout };
    return [{ plan: loadCommand(parsed.command, parsed.flags, {}, quietHost).plan, nft }];
  });
}

/**
 * Names the purpose of a rule meshcap makes (`skip-proxy-owner`, `redirect-outbound`): from the rules of `own`
 * (the plan being drawn, exactly) and of representative configs: the exact rule first, then a rule of the same
 * shape with other values.
 */
export function buildPurposeLookup(layout: 'sidecar' | 'ambient', own: readonly PlanPurposes[] = []): (r: ParsedRule) => string | undefined {
  const exact = new Map<string, string>();
  const shapes = new Map<string, string>();
  for (const p of [...own, ...catalogueOf(layout)]) recordPurposes(p, exact, shapes);
  const key = (r: ParsedRule, family: Family) => `${family} ${r.table} ${r.chain} ${r.spec}`;
  // An inet table's rule is one rule for both families: a plan of one family names it for the other too.
  const other = (r: ParsedRule) => (r.printed === undefined ? undefined : exact.get(key(r, r.family === 'ipv4' ? 'ipv6' : 'ipv4')));
  return (r) => exact.get(key(r, r.family)) ?? other(r) ?? shapes.get(shapeOf(r));
}

/** The rule as nft 1.0.6 lists it in native nftables mode (the key an nft ParsedRule's spec meets), if it has one. */
function nftKey(rule: Rule, family: Family, nft: NftRenderOptions): string | undefined {
  const words = spellNftRule(rule, { ...nft, family });
  return words === undefined ? undefined : `${family} ${rule.table} ${nftChainName(nft.mode, rule.chain)} ${kernelRuleText(words)}`;
}

/** Subcommand first, then `-n` (dry run): commander reads `ambient -n …`, not `-n ambient …`. */
function reorder(argv: readonly string[]): string[] {
  return argv[0] === 'ambient' || argv[0] === 'ambient-host' ? [argv[0], '-n', ...argv.slice(1)] : ['-n', ...argv];
}

import type { InspectedClause, InspectedTarget } from './types.js';
import { readMatch, type MatchContext } from './nft-matches.js';
import { foldStatements, readStatement } from './nft-statements.js';
import { Words } from './nft-words-read.js';

/**
 * One nft rule's words → the same clauses and target the iptables parser produces. nft runs a rule's words in
 * order: matches until one fails, then statements. Where this reader meets words it does not know (or a match
 * after a statement with an effect), the rest of the rule becomes one `foreign` clause, so the walk answers
 * unknown for that rule unless an earlier match already failed — never a guess.
 */
export function parseNftRuleWords(words: readonly string[], ctx: MatchContext): { match: InspectedClause[]; target: InspectedTarget } {
  const w = new Words(words);
  const match: InspectedClause[] = [];
  const stmts: NonNullable<ReturnType<typeof readStatement>>[] = [];
  let acted = false;
  while (!w.done) {
    const at = w.mark();
    const clauses = readMatch(w, ctx);
    if (clauses !== undefined && !acted) {
      match.push(...clauses);
      continue;
    }
    w.reset(at);
    const stmt = clauses === undefined ? readStatement(w) : undefined;
    const ended = stmts.some((s) => s.k === 'jump' || s.k === 'goto' || s.k === 'redirect');
    if (stmt === undefined || ended) {
      w.reset(at);
      const rest = w.rest();
      match.push({ k: 'foreign', module: rest[0] ?? '', tokens: rest });
      return { match, target: { k: 'other', name: rest[0] ?? '', tokens: rest } };
    }
    stmts.push(stmt);
    if (stmt.k !== 'observe') acted = true;
  }
  return { match, target: foldStatements(stmts, words.join(' ')) };
}

import { recordChainFor } from '../../model/ownership.js';
import { isBuiltinChain } from '../../exec/state.js';
import { optionValues, targetOf, type BackendRules, type InspectedRule, type InspectedRules } from '../../inspect/rules-reader.js';

/** What the capture rules of a namespace say, read from every backend: pure questions over InspectedRules. */

const RECORD_PREFIX = recordChainFor('');
const ISTIO = 'ISTIO_';

/** A rule that takes part in evaluation (meshcap's ownership-record chains are bookkeeping, never jumped to). */
const live = (r: InspectedRule) => !r.chain.startsWith(RECORD_PREFIX);
const liveRules = (b: BackendRules) => b.rules.filter(live);

const isIstioTarget = (t: string | undefined) => t !== undefined && t.startsWith(ISTIO) && !t.startsWith(RECORD_PREFIX);

/** Rules in builtin nat/mangle chains that jump into our chains: the capture's entry points. */
export function captureJumps(b: BackendRules): InspectedRule[] {
  return liveRules(b).filter((r) => (r.table === 'nat' || r.table === 'mangle') && isBuiltinChain(r.table, r.chain) && isIstioTarget(targetOf(r.tokens)));
}

export function hasIstioChains(b: BackendRules): boolean {
  return [...b.chains.values()].some((chains) => chains.some((c) => c.startsWith(ISTIO)));
}

/** Native nftables tables of a mesh (`inet istio-proxy-nat`, …). */
export function nativeIstioTables(rules: InspectedRules): string[] {
  return rules.nftTables.filter((t) => t.name.startsWith('istio-')).map((t) => `${t.family} ${t.name}`);
}

/** Ambient's in-pod rules: the ISTIO_PRERT chain, or ztunnel's socket mark 0x539/0xfff. */
export function isAmbient(rules: InspectedRules): boolean {
  return rules.iptables.some((b) => (b.chains.get('mangle') ?? []).includes('ISTIO_PRERT') || liveRules(b).some((r) => optionValues(r.tokens, '--mark').includes('0x539/0xfff')));
}

/** Sidecar TPROXY mode: mangle PREROUTING jumps into ISTIO_INBOUND. */
export function isTproxySidecar(b: BackendRules): boolean {
  return captureJumps(b).some((r) => r.table === 'mangle' && r.chain === 'PREROUTING' && targetOf(r.tokens) === 'ISTIO_INBOUND');
}

/** Owner ids the outbound chain exempts (`--uid-owner` / `--gid-owner` in ISTIO_OUTPUT, negated or not). */
export function exemptOwners(rules: InspectedRules, option: '--uid-owner' | '--gid-owner'): Set<number> {
  const ids = rules.iptables.flatMap((b) => liveRules(b).filter((r) => r.chain === 'ISTIO_OUTPUT').flatMap((r) => optionValues(r.tokens, option)));
  return new Set(ids.filter((v) => /^\d+$/.test(v)).map(Number));
}

/** Ports the rules send captured connections to: REDIRECT --to-ports and TPROXY --on-port in our chains. */
export function redirectPorts(rules: InspectedRules): Set<number> {
  const ports = rules.iptables.flatMap((b) =>
    liveRules(b)
      .filter((r) => r.chain.startsWith(ISTIO))
      .flatMap((r) => [...optionValues(r.tokens, '--to-ports'), ...optionValues(r.tokens, '--on-port')]),
  );
  return new Set(ports.map((p) => Number(p.split('-')[0])).filter((p) => Number.isInteger(p) && p > 0));
}

/** The TPROXY marks of one backend and family, as `[mark, mask]`. */
export function tproxyMarks(b: BackendRules): { text: string; mark: number; mask: number }[] {
  return liveRules(b)
    .filter((r) => r.table === 'mangle' && targetOf(r.tokens) === 'TPROXY')
    .flatMap((r) => optionValues(r.tokens, '--tproxy-mark'))
    .flatMap((text) => {
      const [m = '', k] = text.split('/');
      const mark = Number(m);
      const mask = k === undefined ? 0xffffffff : Number(k);
      return Number.isInteger(mark) && Number.isInteger(mask) ? [{ text, mark, mask }] : [];
    });
}

/** Tokens that only say "TCP to port N" (`-p tcp -m tcp --dport N`); anything else makes a rule conditional. */
function portOnly(tokens: readonly string[]): { port: number | undefined } | undefined {
  let port: number | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === '-j' || t === '-g') break;
    if (t === '-p' && tokens[i + 1] === 'tcp') i++;
    else if (t === '-m' && tokens[i + 1] === 'tcp') i++;
    else if (t === '--dport' && /^\d+$/.test(tokens[i + 1] ?? '')) port = Number(tokens[++i]);
    else return undefined;
  }
  return { port };
}

const CAPTURE_TARGETS = new Set(['ISTIO_IN_REDIRECT', 'ISTIO_TPROXY', 'ISTIO_DIVERT', 'REDIRECT', 'TPROXY']);

/**
 * Whether a sidecar's inbound chain captures TCP to `port`: walk ISTIO_INBOUND of the table PREROUTING jumps
 * from, skipping rules with conditions other than the destination port (marks, sources, interfaces, conntrack
 * state); the first that decides for this port wins, and falling off the end means not captured.
 */
function walkInbound(b: BackendRules, port: number): boolean | undefined {
  const entry = captureJumps(b).find((r) => r.chain === 'PREROUTING' && targetOf(r.tokens) === 'ISTIO_INBOUND');
  if (entry === undefined) return undefined;
  for (const r of liveRules(b).filter((x) => x.table === entry.table && x.chain === 'ISTIO_INBOUND')) {
    const cond = portOnly(r.tokens);
    if (cond === undefined || (cond.port !== undefined && cond.port !== port)) continue;
    const target = targetOf(r.tokens);
    if (target === 'RETURN') return false;
    if (target !== undefined && CAPTURE_TARGETS.has(target)) return true;
  }
  return false;
}

/** Inbound capture as a question per port: undefined when no backend captures inbound at all. */
export function inboundCoverage(rules: InspectedRules): ((port: number) => boolean) | undefined {
  if (isAmbient(rules)) return (port) => port !== 15008;
  const backends = rules.iptables.filter((b) => walkInbound(b, 0) !== undefined);
  if (backends.length === 0) return undefined;
  return (port) => backends.some((b) => walkInbound(b, port) === true);
}

/** The ownership records of a chain: rules meshcap put in a builtin chain (ISTIO_OWNED_<chain>). */
export function recordedSpecs(b: BackendRules, table: string, chain: string): Set<string> {
  return new Set(b.rules.filter((r) => r.table === table && r.chain === `${RECORD_PREFIX}${chain}`).map((r) => r.tokens.join(' ')));
}

export { liveRules };

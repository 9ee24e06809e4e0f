import type { Table } from '../rule.js';

/**
 * Native nftables layout (istio-nftables.md §3–5): which `inet` tables a mode owns, their base chains
 * (type, hook, priority) and the fixed order in which Istio declares chains. Data only.
 */
export type NftMode = 'sidecar' | 'ambient' | 'ambient-host';

export interface BaseChainSpec {
  readonly type: 'nat' | 'filter' | 'route';
  readonly hook: 'prerouting' | 'output' | 'postrouting';
  readonly priority: number;
}

export interface NftTableLayout {
  /** The model's table (nat, mangle, raw) this nft table holds. */
  readonly table: Table;
  readonly name: string;
  /** Chains in Istio's fixed declaration order; base chains carry their spec. */
  readonly chains: readonly { readonly name: string; readonly base?: BaseChainSpec }[];
}

const natBase = (hook: 'prerouting' | 'output'): BaseChainSpec => ({ type: 'nat', hook, priority: -100 });
const MANGLE = [
  { name: 'prerouting', base: { type: 'filter', hook: 'prerouting', priority: -150 } },
  { name: 'output', base: { type: 'route', hook: 'output', priority: -150 } },
] as const;
const RAW = [
  { name: 'prerouting', base: { type: 'filter', hook: 'prerouting', priority: -300 } },
  { name: 'output', base: { type: 'filter', hook: 'output', priority: -300 } },
] as const;
const NAT = [
  { name: 'prerouting', base: natBase('prerouting') },
  { name: 'output', base: natBase('output') },
] as const;

const SIDECAR: readonly NftTableLayout[] = [
  { table: 'nat', name: 'istio-proxy-nat', chains: [...NAT, ...['istio-inbound', 'istio-redirect', 'istio-in-redirect', 'istio-output', 'istio-output-dns'].map((name) => ({ name }))] },
  { table: 'mangle', name: 'istio-proxy-mangle', chains: [...MANGLE, ...['istio-divert', 'istio-tproxy', 'istio-inbound', 'istio-drop'].map((name) => ({ name }))] },
  { table: 'raw', name: 'istio-proxy-raw', chains: [...RAW, ...['istio-inbound', 'istio-output-dns'].map((name) => ({ name }))] },
];

const AMBIENT_REGULAR = [{ name: 'istio-prerouting' }, { name: 'istio-output' }];
const AMBIENT: readonly NftTableLayout[] = [
  { table: 'nat', name: 'istio-ambient-nat', chains: [...NAT, ...AMBIENT_REGULAR] },
  { table: 'mangle', name: 'istio-ambient-mangle', chains: [...MANGLE, ...AMBIENT_REGULAR] },
  { table: 'raw', name: 'istio-ambient-raw', chains: [...RAW, ...AMBIENT_REGULAR] },
];

const HOST: readonly NftTableLayout[] = [
  { table: 'nat', name: 'istio-ambient-nat', chains: [{ name: 'postrouting', base: { type: 'nat', hook: 'postrouting', priority: 100 } }] },
];

/** The tables a mode may own, in Istio's transaction order (nat, mangle, raw). */
export function nftLayout(mode: NftMode): readonly NftTableLayout[] {
  return mode === 'sidecar' ? SIDECAR : mode === 'ambient' ? AMBIENT : HOST;
}

/**
 * The nft chain for a model chain: builtins lower-cased, ours as Istio names them in nft
 * (ISTIO_IN_REDIRECT → istio-in-redirect, ambient's ISTIO_PRERT → istio-prerouting). The host's
 * ISTIO_POSTRT is folded into the base chain, as Istio's nft host rules live in `postrouting` itself.
 */
export function nftChainName(mode: NftMode, chain: string): string {
  if (mode !== 'sidecar' && chain === 'ISTIO_PRERT') return 'istio-prerouting';
  if (mode === 'ambient-host' && chain === 'ISTIO_POSTRT') return 'postrouting';
  return chain.toLowerCase().replaceAll('_', '-');
}

/** The probe-address sets of the node side (§5), and the comment Istio gives them. */
export const PROBE_SETS = {
  ipv4: { name: 'istio-inpod-probes-v4', type: 'ipv4_addr' },
  ipv6: { name: 'istio-inpod-probes-v6', type: 'ipv6_addr' },
} as const;
export const PROBE_SET_COMMENT = 'UUID of the pods that are part of ambient mesh';

/** Every table name meshcap's nft mode can own: cleanup deletes exactly these. */
export function ownedNftTables(mode: NftMode): readonly string[] {
  return nftLayout(mode).map((t) => t.name);
}

/**
 * Istio's native nftables goldens mapped to meshcap flags: the same configs as the iptables cases
 * (CASES.md §7 for the sidecar, §2 for ambient) with `--native-nftables`, plus the nft-only
 * inbound-ports-empty-tproxy. The nft host golden mocks the kubelet UID as 1000 and keeps Istio's test
 * IPv6 probe address.
 */
import { AMBIENT_CASES } from './ambient-cases.js';
import { CAPTURE_CASES, type GoldenCase } from './sidecar-cases.js';

const NFT = '--native-nftables';
const TEST_SNAT_V6 = ['--host-probe-snat-v6', 'e9ac:1e77:90ca:399f:4d6d:ece2:2f9b:3164'];

export const NFT_SIDECAR_CASES: readonly GoldenCase[] = [
  ...CAPTURE_CASES.map((c) => ({ ...c, argv: [NFT, ...c.argv] })),
  { golden: 'inbound-ports-empty-tproxy', argv: [NFT, '-n', '-p', '15001', '-z', '15006', '-u', '1337', '-g', '1337', '-b', '', '-m', 'TPROXY', '--ipv6', 'off'] },
];

export const NFT_AMBIENT_CASES: readonly GoldenCase[] = AMBIENT_CASES.map((c) => {
  const [command, ...rest] = c.argv;
  const host = command === 'ambient-host' ? ['--kubelet-uid', '1000', ...TEST_SNAT_V6] : [];
  return { ...c, argv: [command ?? '', NFT, ...rest, ...host] };
});

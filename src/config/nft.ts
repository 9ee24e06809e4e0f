import { ConfigError } from '../errors.js';
import type { OwnerId } from '../model/rule.js';

/**
 * Inputs that reach the nft transaction unquoted (as Istio writes them) must be words nft's parser reads
 * as names: an interface starting with a digit, or holding `@` or `+`, and a group ending in `$` would
 * change or break the transaction. Checked only in native nftables mode; iptables mode accepts them.
 */
const NFT_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

export function checkNftInterfaces(flag: string, names: readonly string[]): void {
  for (const n of names) {
    if (!NFT_NAME.test(n)) throw new ConfigError(flag, n, 'with --native-nftables an interface name must start with a letter or "_" and hold only letters, digits, "_", "-" and "."');
  }
}

export function checkNftGroups(field: string, groups: '*' | readonly OwnerId[]): void {
  if (groups === '*') return;
  for (const g of groups) {
    if (g.id === undefined && !NFT_NAME.test(g.text)) throw new ConfigError(field, g.text, 'with --native-nftables a group name must hold only letters, digits, "_", "-" and "."');
  }
}

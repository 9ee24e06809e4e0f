/** A table of `nft list ruleset` (iptables-nft's own tables included). */
export interface NftTable {
  readonly family: string;
  readonly name: string;
}

/** Table names out of `nft -j list ruleset`; anything else in the JSON is not needed yet. */
export function parseNftTables(json: string): NftTable[] {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    return [];
  }
  const items = (doc as { nftables?: unknown } | null)?.nftables;
  if (!Array.isArray(items)) return [];
  return items.flatMap((item: unknown) => {
    const t = (item as { table?: { family?: unknown; name?: unknown } } | null)?.table;
    return typeof t?.family === 'string' && typeof t.name === 'string' ? [{ family: t.family, name: t.name }] : [];
  });
}

import type { Cidr } from '../model/cidr.js';

/**
 * Formats an address the way glibc's inet_ntop does, which is what iptables-save prints: IPv6 with the first
 * longest run (≥ 2) of zero groups compressed, and IPv4-compatible/-mapped addresses in dotted form
 * (`::127.0.0.53`, `::ffff:1.2.3.4`).
 */
export function formatAddress(bytes: readonly number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  const words = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0));
  let best = { base: -1, len: 0 };
  let cur = { base: -1, len: 0 };
  words.forEach((w, i) => {
    if (w === 0) {
      cur = cur.base === -1 ? { base: i, len: 1 } : { base: cur.base, len: cur.len + 1 };
      if (cur.len > best.len) best = cur;
    } else {
      cur = { base: -1, len: 0 };
    }
  });
  if (best.len < 2) best = { base: -1, len: 0 };
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (best.base !== -1 && i >= best.base && i < best.base + best.len) {
      if (i === best.base) out += ':';
      continue;
    }
    if (i !== 0) out += ':';
    if (i === 6 && best.base === 0 && (best.len === 6 || (best.len === 5 && words[5] === 0xffff))) {
      out += bytes.slice(12).join('.');
      break;
    }
    out += (words[i] ?? 0).toString(16);
  }
  if (best.base !== -1 && best.base + best.len === 8) out += ':';
  return out;
}

/** A CIDR as the kernel prints it back: network address (host bits cleared) and prefix length. */
export function formatCanonicalCidr(c: Cidr): string {
  return `${formatAddress(c.bytes)}/${c.prefix}`;
}

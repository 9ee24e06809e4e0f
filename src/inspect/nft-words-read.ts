import { parseCidr, parseHostAddress, type Cidr } from '../model/cidr.js';

/** A cursor over one nft rule's words (nft-text.ts's `splitWords`, or words made from `nft -j`). */
export class Words {
  private i = 0;
  constructor(readonly words: readonly string[]) {}
  peek(ahead = 0): string | undefined {
    return this.words[this.i + ahead];
  }
  next(): string | undefined {
    const w = this.words[this.i];
    if (w !== undefined) this.i += 1;
    return w;
  }
  /** Consumes `w` if it comes next. */
  take(w: string): boolean {
    if (this.words[this.i] !== w) return false;
    this.i += 1;
    return true;
  }
  get done(): boolean {
    return this.i >= this.words.length;
  }
  /** The words from the cursor on, consumed. */
  rest(): string[] {
    const r = this.words.slice(this.i);
    this.i = this.words.length;
    return r;
  }
  mark(): number {
    return this.i;
  }
  reset(at: number): void {
    this.i = at;
  }
}

/** One value or an anonymous set `{ a, b }`: the values, or undefined when the words do not hold one. */
export function readValues(w: Words): string[] | undefined {
  if (!w.take('{')) {
    const v = w.next();
    return v === undefined || v === '}' || v === ',' ? undefined : [v];
  }
  const out: string[] = [];
  for (let v = w.next(); v !== '}'; v = w.next()) {
    if (v === undefined) return undefined;
    if (v !== ',') out.push(v);
  }
  return out;
}

/** `a,b,c` as nft prints flag lists (`ct state established,related`). */
export function readCommaList(w: Words): string[] | undefined {
  const braced = w.peek() === '{';
  if (braced) return readValues(w);
  const first = w.next();
  if (first === undefined) return undefined;
  const out = [first];
  while (w.peek() === ',' && w.peek(1) !== undefined) {
    w.next();
    out.push(w.next() ?? '');
  }
  return out;
}

export const readNot = (w: Words): boolean => w.take('!=');

const NUMBER = /^(0x[0-9a-f]+|[0-9]+)$/i;
export const parseNumber = (s: string | undefined): number | undefined => (s !== undefined && NUMBER.test(s) ? Number(s) : undefined);

/** `N` or `N-M`. */
export function parseRange(s: string): [number, number] | undefined {
  const [a, b, extra] = s.split('-');
  const from = parseNumber(a);
  const to = b === undefined ? from : parseNumber(b);
  return from === undefined || to === undefined || extra !== undefined ? undefined : [from, to];
}

/** An address or prefix as nft prints it (`127.0.0.1`, `1.1.0.0/16`, `::6`). */
export function parseAddress(s: string): Cidr | undefined {
  const r = s.includes('/') ? parseCidr(s) : parseHostAddress(s);
  return r.ok ? r.value : undefined;
}

/** `"eth*"` → the iptables spelling `eth+` the walk reads; quotes dropped. */
export function parseIface(s: string): string {
  const bare = s.replace(/^"(.*)"$/, '$1');
  return bare.endsWith('*') && !bare.endsWith('\\*') ? `${bare.slice(0, -1)}+` : bare.replace(/\\\*$/, '*');
}

/**
 * Which documents a cache that began with the whole state has dropped, as a Bloom filter of a
 * fixed size: "no" is certain, "maybe" is wrong in a small share of cases (it then costs a read
 * that finds nothing). A cache that knows its dropped documents answers a miss on any other id
 * with "none" instead of asking the store: in a rebuild of a collection fold, four in ten reads
 * that went to the store were for documents that do not exist (dependents of objects nothing
 * links to), each a store read and a fold step run again.
 */
export class EvictedIds {
  private readonly bits: Uint32Array;
  private readonly mask: number;

  /** `bytes`: the filter's size, rounded down to a power of two (at least 4 kB). */
  constructor(bytes: number) {
    let words = 1024;
    while (words * 8 <= bytes) words *= 2;
    this.bits = new Uint32Array(words);
    this.mask = words * 32 - 1;
  }

  get bytes(): number {
    return this.bits.byteLength;
  }

  add(collection: number, id: string): void {
    const h1 = hash(id, 0x811c9dc5 ^ collection);
    const h2 = hash(id, 0x01000193 + collection) | 1;
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & this.mask;
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  /** False when `id` was never added for `collection`; true when it was, or (rarely) when it was not. */
  mayHold(collection: number, id: string): boolean {
    const h1 = hash(id, 0x811c9dc5 ^ collection);
    const h2 = hash(id, 0x01000193 + collection) | 1;
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & this.mask;
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/**
 * Bits set per id. A rebuild of one of the app's folds at 1M events drops about 150k documents
 * into a 512 kB filter (28 bits each): 4 probes are then wrong about one id in 3,000.
 */
const PROBES = 4;

/** FNV-1a over the id's UTF-16 code units, from `seed`, finished with a murmur3 mix so every bit depends on every unit. */
const hash = (id: string, seed: number): number => {
  let h = seed;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
};

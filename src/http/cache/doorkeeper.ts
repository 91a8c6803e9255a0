/**
 * Admission for the representation cache (representation-cache.ts): a representation is kept from its second
 * miss, not its first. Its own module, as it shares nothing with the cache but a key.
 */

/** Whether bit `bit` of `bits` is set. */
function hasBit(bits: Uint32Array, bit: number): boolean {
  return ((bits[bit >>> 5] as number) & (1 << (bit & 31))) !== 0;
}

function setBit(bits: Uint32Array, bit: number): void {
  bits[bit >>> 5] = (bits[bit >>> 5] as number) | (1 << (bit & 31));
}

/** Bit positions a key sets in the doorkeeper's filter: with ~16 bits a key, the fewest false positives for few probes. */
const BLOOM_POSITIONS = 4;

/**
 * Admission (as TinyLFU's "doorkeeper"): a representation is kept only when its key has missed
 * before, recently. Most misses of a public API are one-off: a search text nobody sends again,
 * a cursor, a guide read once by a crawler. Keeping each of them evicted hot representations and
 * left the evicted bodies as garbage outside V8's heap until its next full collection (resident
 * memory: docs/performance.md, "Representation cache").
 * A key read twice is kept at its second read, so a hot page costs one extra render.
 *
 * Keys seen are remembered in two generations of a Bloom filter (four bit positions a key, fixed
 * memory, nothing allocated per miss): after `window` misses the older generation is dropped. A
 * false positive only admits a one-off key. The positions come from independent hashes: derived
 * from one another, the filter works as if it had one hash and admits far more one-off keys.
 */
export class Doorkeeper {
  private current: Uint32Array;
  private previous: Uint32Array;
  private recorded = 0;
  private readonly mask: number;
  private readonly window: number;
  /** The current key's bit positions (scratch: admit() is synchronous). */
  private readonly positions = new Uint32Array(BLOOM_POSITIONS);

  constructor(window: number) {
    this.window = window;
    // About 16 bits a key per generation, a power of two.
    const bits = 2 ** Math.max(10, Math.ceil(Math.log2(window * 16)));
    this.mask = bits - 1;
    this.current = new Uint32Array(bits / 32);
    this.previous = new Uint32Array(bits / 32);
  }

  /** Whether `key` was recorded within the last one or two windows; records it. */
  admit(key: string): boolean {
    // FNV-1a; the bit positions are a + i·b (Kirsch–Mitzenmacher), b odd, from the hash's high bits
    // mixed down by MurmurHash3's finalizer, so that b does not follow from a.
    let hash = 0x811c9dc5;
    for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    let mixed = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
    mixed = Math.imul(mixed ^ (mixed >>> 13), 0xc2b2ae35);
    mixed ^= mixed >>> 16;
    const a = hash >>> 0;
    const b = (mixed >>> 0) | 1;
    const { mask } = this;
    const positions = this.positions;
    for (let i = 0; i < BLOOM_POSITIONS; i += 1) positions[i] = (a + Math.imul(i, b)) & mask;
    if (this.hasAll(this.current) || this.hasAll(this.previous)) return true;
    for (const position of positions) setBit(this.current, position);
    this.recorded += 1;
    if (this.recorded >= this.window) {
      this.previous = this.current;
      this.current = new Uint32Array(this.current.length);
      this.recorded = 0;
    }
    return false;
  }

  private hasAll(bits: Uint32Array): boolean {
    for (const position of this.positions) if (!hasBit(bits, position)) return false;
    return true;
  }
}

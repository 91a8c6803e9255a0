/** The search caches' storage: one buffer written round, oldest entries out first, none used this turn. */
import { describe, expect, it } from 'vitest';
import { RingCache } from '../../../../src/store/sqlite/search/ring-cache.js';

/** Keeps `bytes` bytes, each set to `mark`, and returns their view. */
function put<K>(ring: RingCache<K, Uint8Array>, key: K, bytes: number, mark: number): Uint8Array | undefined {
  return ring.put(key, bytes, (buffer, offset) => new Uint8Array(buffer, offset, bytes).fill(mark));
}

describe('RingCache', () => {
  it('keeps entries until the write position comes round to them, oldest first', () => {
    const ring = new RingCache<string, Uint8Array>(64);
    ring.turn();
    const a = put(ring, 'a', 16, 1)!;
    put(ring, 'b', 16, 2);
    put(ring, 'c', 16, 3);
    expect(ring.bytes).toBe(48);
    ring.turn();
    // 16 bytes left at the end, then round: d takes them, e overwrites a.
    put(ring, 'd', 16, 4);
    expect(ring.get('a')).toBe(a);
    ring.turn();
    expect(put(ring, 'e', 16, 5)).toBeDefined();
    expect(ring.get('a')).toBeUndefined();
    expect([...ring.get('b')!]).toEqual(Array(16).fill(2));
    expect([...ring.get('e')!]).toEqual(Array(16).fill(5));
    expect(ring.bytes).toBe(64);
  });

  it('wraps an entry that does not fit before the end to the start, dropping what lies in the way', () => {
    const ring = new RingCache<string, Uint8Array>(64);
    put(ring, 'a', 24, 1);
    put(ring, 'b', 24, 2);
    ring.turn();
    // 16 bytes left: c (24) goes to the start over a, and the tail stays unused.
    put(ring, 'c', 24, 3);
    expect(ring.get('a')).toBeUndefined();
    expect([...ring.get('b')!]).toEqual(Array(24).fill(2));
    expect([...ring.get('c')!]).toEqual(Array(24).fill(3));
    ring.turn();
    // d fits after c, over the start of b (which ends at 48): b goes.
    put(ring, 'd', 16, 4);
    expect(ring.get('b')).toBeUndefined();
    expect([...ring.get('c')!]).toEqual(Array(24).fill(3));
    expect(ring.bytes).toBe(40);
  });

  it('never overwrites an entry got or put in the current turn: it declines instead', () => {
    const ring = new RingCache<string, Uint8Array>(64);
    ring.turn();
    put(ring, 'a', 32, 1);
    put(ring, 'b', 32, 2);
    ring.turn();
    ring.get('a');
    expect(put(ring, 'c', 32, 3)).toBeUndefined();
    expect([...ring.get('a')!]).toEqual(Array(32).fill(1));
    ring.turn();
    expect(put(ring, 'c', 32, 3)).toBeDefined();
    expect(ring.get('a')).toBeUndefined();
  });

  it('rounds room up to 8 bytes, declines entries over its share, and forgets everything on clear', () => {
    const ring = new RingCache<string, Uint8Array>(64, 4);
    expect(
      ring.put('odd', 3, (buffer, offset) => {
        expect(offset % 8).toBe(0);
        return new Uint8Array(buffer, offset, 3);
      }),
    ).toHaveLength(3);
    expect(ring.bytes).toBe(8);
    expect(put(ring, 'big', 17, 1)).toBeUndefined();
    expect(put(ring, 'fits', 16, 1)).toBeDefined();
    const offsets: number[] = [];
    ring.put('next', 8, (buffer, offset) => {
      offsets.push(offset);
      return new Uint8Array(buffer, offset, 8);
    });
    expect(offsets).toEqual([24]);
    ring.clear();
    expect(ring.bytes).toBe(0);
    expect(ring.get('fits')).toBeUndefined();
    ring.put('again', 8, (buffer, offset) => {
      offsets.push(offset);
      return new Uint8Array(buffer, offset, 8);
    });
    expect(offsets).toEqual([24, 0]);
  });

  it('keeps what it holds intact through many rounds of mixed sizes', () => {
    const ring = new RingCache<number, Uint8Array>(1000, 4);
    for (let i = 0; i < 5000; i += 1) {
      ring.turn();
      const size = 1 + ((i * 37) % 240);
      put(ring, i, size, i % 251);
      for (let back = 0; back < 20 && back <= i; back += 1) {
        const kept = ring.get(i - back);
        if (kept)
          expect(
            kept.every((byte) => byte === (i - back) % 251),
            `entry ${i - back}`,
          ).toBe(true);
      }
      expect(ring.bytes).toBeLessThanOrEqual(1000);
    }
  });
});

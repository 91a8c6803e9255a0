/**
 * A cache whose values live in one buffer, allocated once: entries are written one after another,
 * and when the write position comes round, the oldest entries in the way are overwritten (first in,
 * first out).
 *
 * Why not a Map of separately allocated arrays: under a stream of distinct searches, such a cache
 * keeps evicting arrays that lived long enough to reach V8's old generation, and their memory
 * (outside the JavaScript heap) is only given back at V8's next full collection, which external
 * memory alone triggers only rarely. A search worker of a 100k-guide index held that
 * much garbage besides its caches. Here a miss allocates nothing that outlives it.
 *
 * Values are views into the buffer, valid until their bytes are overwritten. An entry got or put
 * during the current turn (see `turn()`) is never overwritten: a search holds every list it has
 * resolved until it has scored them. When the room a new entry needs is held by such an entry,
 * `put` declines and the caller uses its own copy for this once.
 */
export class RingCache<K, V> {
  private buffer: ArrayBuffer | undefined;
  private head = 0;
  private readonly entries = new Map<K, { start: number; bytes: number; value: V; turn: number }>();
  /** Keys in the order they were written (the buffer's order, from the oldest): `order[first]` is next out. */
  private order: K[] = [];
  private first = 0;
  private currentTurn = 0;
  private used = 0;
  readonly capacity: number;
  private readonly maxShare: number;

  /** `capacity` bytes at most; an entry over a `maxShare`th of it is not kept. */
  constructor(capacity: number, maxShare = 1) {
    this.capacity = capacity;
    this.maxShare = maxShare;
  }

  /** Bytes held by entries now. */
  get bytes(): number {
    return this.used;
  }

  /** Starts a new turn: entries used in earlier turns may be overwritten again. */
  turn(): void {
    this.currentTurn += 1;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    entry.turn = this.currentTurn;
    return entry.value;
  }

  /**
   * Makes room for `bytes` bytes (rounded up to a multiple of 8, so any typed array can view them)
   * and keeps under `key` the value `fill` returns given the buffer and the offset of that room.
   * Undefined when the entry is too large, or its room holds an entry of the current turn.
   */
  put<T extends V>(key: K, bytes: number, fill: (buffer: ArrayBuffer, offset: number) => T): T | undefined {
    const size = Math.ceil(bytes / 8) * 8;
    if (size > this.capacity / this.maxShare || this.entries.has(key)) return undefined;
    const start = this.head + size > this.capacity ? 0 : this.head;
    // Positions measured forward from the write position: the room taken runs up to `end`, across
    // the end of the buffer when it wraps. Entries left from the previous round lie ahead of the
    // write position, oldest first, so the ones in the way are at the front of `order`.
    const end = start === 0 && this.head > 0 ? this.capacity + size : this.head + size;
    while (this.first < this.order.length) {
      const oldest = this.entries.get(this.order[this.first] as K)!;
      const position = oldest.start >= this.head ? oldest.start : oldest.start + this.capacity;
      if (position >= end) break;
      if (oldest.turn === this.currentTurn) return undefined;
      this.entries.delete(this.order[this.first] as K);
      this.used -= oldest.bytes;
      this.first += 1;
    }
    if (this.first > 1024 && this.first * 2 > this.order.length) {
      this.order = this.order.slice(this.first);
      this.first = 0;
    }
    this.buffer ??= new ArrayBuffer(this.capacity);
    const value = fill(this.buffer, start);
    this.entries.set(key, { start, bytes: size, value, turn: this.currentTurn });
    this.order.push(key);
    this.used += size;
    this.head = start + size;
    return value;
  }

  /** Forgets every entry (the buffer is kept for the next ones). */
  clear(): void {
    this.entries.clear();
    this.order = [];
    this.first = 0;
    this.head = 0;
    this.used = 0;
  }
}

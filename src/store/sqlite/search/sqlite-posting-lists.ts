/** The posting lists of an index being built (SearchIndexBuilder), before BM25F weighting. */
import { writeVarint } from './sqlite-index-format.js';

/** Bytes per chunk of PostingLists: one cache line. */
const CHUNK = 64;
/** The most bytes one append writes: five varints of up to 5 bytes. */
const MAX_APPEND = 25;

/**
 * Every token's posting list while the index is built, appended to in docno order. Lists live in
 * chunks of CHUNK bytes of one growing arena, linked per list, so an append touches the chunk
 * its list ends in and a few small arrays (a growable buffer per list costs several cache misses
 * per append, and an import appends tens of millions of times). `bytesOf` joins a list's chunks.
 * Frequencies are kept per column here; SearchIndexBuilder.finish makes them BM25F's, once every
 * column's average length is known.
 */
export class PostingLists {
  private arena = new Uint8Array(CHUNK * 16_384);
  private chunkCount = 0;
  /** Per chunk: the next chunk of its list, and the bytes used (for chunks before a list's last). */
  private chunkNext = new Int32Array(16_384);
  private chunkUsed = new Int32Array(16_384);
  /** Per list: its first and last chunks, the bytes used in the last, its length in bytes. */
  private first = new Int32Array(1024);
  private last = new Int32Array(1024);
  private fill = new Int32Array(1024);
  private size = new Int32Array(1024);
  count = 0;

  /** A new empty list; its id is the number of lists before it. */
  addList(): void {
    const id = this.count;
    this.count += 1;
    if (id >= this.first.length) {
      this.first = grownInt32(this.first);
      this.last = grownInt32(this.last);
      this.fill = grownInt32(this.fill);
      this.size = grownInt32(this.size);
    }
    const chunk = this.newChunk();
    this.first[id] = chunk;
    this.last[id] = chunk;
    this.fill[id] = 0;
    this.size[id] = 0;
  }

  private newChunk(): number {
    const chunk = this.chunkCount;
    this.chunkCount += 1;
    if (chunk >= this.chunkNext.length) {
      this.chunkNext = grownInt32(this.chunkNext);
      this.chunkUsed = grownInt32(this.chunkUsed);
      const arena = new Uint8Array(this.chunkNext.length * CHUNK);
      arena.set(this.arena);
      this.arena = arena;
    }
    return chunk;
  }

  /**
   * Appends a posting to list `id`: its docno delta, its body count × 8 plus a bit for each short
   * column it occurs in (title 1, summary 2, tags 4), then those columns' counts.
   */
  append(id: number, delta: number, title: number, summary: number, tags: number, body: number): void {
    let chunk = this.last[id] as number;
    let fill = this.fill[id] as number;
    if (fill + MAX_APPEND > CHUNK) {
      const next = this.newChunk();
      this.chunkUsed[chunk] = fill;
      this.chunkNext[chunk] = next;
      this.last[id] = next;
      chunk = next;
      fill = 0;
    }
    const arena = this.arena;
    const start = chunk * CHUNK + fill;
    let pos = writeVarint(arena, start, delta);
    pos = writeVarint(arena, pos, body * 8 + (title > 0 ? 1 : 0) + (summary > 0 ? 2 : 0) + (tags > 0 ? 4 : 0));
    if (title > 0) pos = writeVarint(arena, pos, title);
    if (summary > 0) pos = writeVarint(arena, pos, summary);
    if (tags > 0) pos = writeVarint(arena, pos, tags);
    this.fill[id] = fill + pos - start;
    this.size[id] = (this.size[id] as number) + pos - start;
  }

  /** List `id` as one buffer. */
  bytesOf(id: number): Buffer {
    const out = Buffer.allocUnsafe(this.size[id] as number);
    let written = 0;
    const last = this.last[id] as number;
    for (let chunk = this.first[id] as number; ; chunk = this.chunkNext[chunk] as number) {
      const used = chunk === last ? (this.fill[id] as number) : (this.chunkUsed[chunk] as number);
      out.set(this.arena.subarray(chunk * CHUNK, chunk * CHUNK + used), written);
      written += used;
      if (chunk === last) return out;
    }
  }
}

function grownInt32(array: Int32Array): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(array.length * 2);
  grown.set(array);
  return grown;
}

/**
 * Block tables: what lets a search skip the guides that cannot reach its page (sqlite-block-scan.ts).
 * Guides are cut into blocks of BLOCK_DOCS docnos, the same blocks for every list. The table of a
 * list (search_postings.blocks) holds, per block: the highest frequency among the list's postings
 * in the block (0: none), where those postings start in the list's bytes, and the docno before
 * them (a list's docnos are deltas, so reading can resume there). Only lists of at least one in
 * BLOCK_TABLE_SHARE guides have one: shorter lists are read whole.
 */
import { VarintReader, VarintWriter, impactOf } from './sqlite-index-format.js';

export const BLOCK_DOCS = 32;
export const BLOCK_TABLE_SHARE = 16;

/** How many blocks an index of `docCount` guides has. */
export function blockCount(docCount: number): number {
  return Math.ceil(docCount / BLOCK_DOCS);
}

/** Whether a list of `df` postings gets a block table. */
export function hasBlockTable(df: number, docCount: number): boolean {
  return df * BLOCK_TABLE_SHARE >= docCount;
}

/**
 * The block table of a list as stored (docno-ordered varint pairs: delta, frequency): per block,
 * three varints: its highest frequency, the bytes since the previous block's start, and how far
 * the docno before its postings lies before the block's first docno.
 */
export function blockTableOf(list: Uint8Array, docCount: number): Buffer {
  const postings = new VarintReader(list);
  const table = new VarintWriter(blockCount(docCount) * 3);
  let doc = -1;
  let blockStart = 0;
  for (let block = 0; block < blockCount(docCount); block += 1) {
    const start = postings.pos;
    const before = doc;
    const end = (block + 1) * BLOCK_DOCS;
    let highest = 0;
    for (;;) {
      if (postings.done) break;
      const at = postings.pos;
      const next = doc + postings.next() + 1;
      if (next >= end) {
        postings.pos = at;
        break;
      }
      doc = next;
      highest = Math.max(highest, postings.next());
    }
    table.push(highest);
    table.push(start - blockStart);
    table.push(block * BLOCK_DOCS - 1 - before);
    blockStart = start;
  }
  return table.toBuffer();
}

/** A block table as a search reads it, per block: where its postings start, the docno before them, and an upper bound of their impacts (0: none). */
export interface BlockTable {
  starts: Int32Array;
  before: Int32Array;
  max: Float64Array;
}

/** A BlockTable for `docCount` guides, its arrays in `buffer` from `offset` (8-byte aligned), blockTableBytes(docCount) long. */
export function blockTableIn(buffer: ArrayBuffer, offset: number, docCount: number): BlockTable {
  const blocks = blockCount(docCount);
  return {
    max: new Float64Array(buffer, offset, blocks),
    starts: new Int32Array(buffer, offset + blocks * 8, blocks),
    before: new Int32Array(buffer, offset + blocks * 12, blocks),
  };
}

export function blockTableBytes(docCount: number): number {
  return blockCount(docCount) * 16;
}

/**
 * Reads a stored block table into `table`, for a list whose impacts are `idf · f·(k1+1) / (f + k1)`:
 * a block's bound is the impact of its highest frequency, which no posting in it exceeds (the
 * impact grows with the frequency, by far more than the rounding of its few operations).
 */
export function readBlockTable(stored: Uint8Array, idf: number, table: BlockTable): void {
  const reader = new VarintReader(stored);
  let start = 0;
  for (let block = 0; block < table.max.length; block += 1) {
    const highest = reader.next();
    start += reader.next();
    table.starts[block] = start;
    table.before[block] = block * BLOCK_DOCS - 1 - reader.next();
    // The same expression as every impact (sqlite-postings.ts), so the bound is of the same doubles.
    table.max[block] = highest === 0 ? 0 : impactOf(idf, highest);
  }
}

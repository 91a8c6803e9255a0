/** Prefix lists: merged posting lists of the prefixes that expand to many tokens or postings. */
import { PREFIX_MAX_EXPANSIONS, PREFIX_MAX_POSTINGS_SHARE, VarintReader, VarintWriter } from './sqlite-index-format.js';

/**
 * Finds the prefixes that deserve a merged list and writes them (ids after the tokens' ids).
 * A prefix qualifies when it expands to more than PREFIX_MAX_EXPANSIONS tokens, or to more
 * postings than one in PREFIX_MAX_POSTINGS_SHARE guides: below both, merging at query time is
 * cheaper than storing.
 */
export function buildPrefixLists(
  terms: readonly string[],
  postings: readonly Uint8Array[],
  docFrequency: Int32Array,
  docCount: number,
  write: (prefixId: number, df: number, data: Buffer) => void,
): { prefix: string; df: number }[] {
  const order = terms
    .map((_, id) => id)
    .sort((a, b) => {
      const x = terms[a] as string;
      const y = terms[b] as string;
      return x < y ? -1 : x > y ? 1 : 0;
    });
  const qualifying: { prefix: string; from: number; to: number }[] = [];
  const maxLength = terms.reduce((max, term) => Math.max(max, term.length), 0);
  for (let length = 1; length <= maxLength; length += 1) {
    let from = 0;
    while (from < order.length) {
      const first = terms[order[from] as number] as string;
      if (first.length < length) {
        from += 1;
        continue;
      }
      const prefix = first.slice(0, length);
      let to = from + 1;
      let mass = docFrequency[order[from] as number] as number;
      while (to < order.length && (terms[order[to] as number] as string).startsWith(prefix)) {
        mass += docFrequency[order[to] as number] as number;
        to += 1;
      }
      if (to - from > PREFIX_MAX_EXPANSIONS || (to - from > 1 && mass * PREFIX_MAX_POSTINGS_SHARE > docCount))
        qualifying.push({ prefix, from, to });
      from = to;
    }
  }
  // Longest prefixes first: a prefix then merges the lists of the longer qualifying prefixes in its
  // range, already merged (at most one posting per guide), instead of all their tokens' lists.
  // Ranges of prefixes are nested or disjoint; coverEnd[i] is the end of the widest range built so
  // far that starts at position i of `order` (0: none), coverOf[i] its index in `qualifying`.
  const merged: Buffer[] = new Array<Buffer>(qualifying.length);
  const mergedDf = new Int32Array(qualifying.length);
  const coverEnd = new Int32Array(order.length);
  const coverOf = new Int32Array(order.length);
  const byLength = qualifying
    .map((_, index) => index)
    .sort((a, b) => (qualifying[b] as { prefix: string }).prefix.length - (qualifying[a] as { prefix: string }).prefix.length || a - b);
  const sums = new Int32Array(docCount);
  const touched = new Int32Array(docCount);
  for (const index of byLength) {
    const { from, to } = qualifying[index] as { from: number; to: number };
    let count = 0;
    const add = (list: Uint8Array): void => {
      const reader = new VarintReader(list);
      let doc = -1;
      while (!reader.done) {
        doc += reader.next() + 1;
        const f = reader.next();
        if (sums[doc] === 0) touched[count++] = doc;
        sums[doc] = (sums[doc] as number) + f;
      }
    };
    for (let i = from; i < to;) {
      const end = coverEnd[i] as number;
      if (end > 0) {
        add(merged[coverOf[i] as number] as Buffer);
        i = end;
      } else {
        add(postings[order[i] as number] as Uint8Array);
        i += 1;
      }
    }
    coverEnd[from] = to;
    coverOf[from] = index;
    const out = new VarintWriter(count * 2 + 8);
    let last = -1;
    const emit = (doc: number): void => {
      out.push(doc - last - 1);
      out.push(sums[doc] as number);
      sums[doc] = 0;
      last = doc;
    };
    // Many documents: scanning them all in order beats sorting the ones touched.
    if (count > docCount / 8) {
      for (let doc = 0; doc < docCount; doc += 1) if (sums[doc] !== 0) emit(doc);
    } else {
      for (const doc of touched.subarray(0, count).sort()) emit(doc);
    }
    merged[index] = out.toBuffer();
    mergedDf[index] = count;
  }
  const written: { prefix: string; df: number }[] = [];
  qualifying.forEach(({ prefix }, index) => {
    write(index, mergedDf[index] as number, merged[index] as Buffer);
    written.push({ prefix, df: mergedDf[index] as number });
  });
  return written;
}

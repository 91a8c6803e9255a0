/** Guide → search document: the analyzer that reads a guide's columns into tokens (see sqlite-index-format.ts). */
import type { GuideRecord } from '../../../guides/guide.js';
import { CHECKPOINT_EVERY, COLUMNS, HIGH_SURROGATE, VarintWriter, headOf, packDocTerms, searchCardJson } from './sqlite-index-format.js';
import type { DocTerms, SearchDoc, SearchDocData } from './sqlite-index-format.js';
import { ABSENT, ASCII_WORD, FNV_OFFSET, FNV_PRIME, WordTable, isWordCode, wordTokens } from './sqlite-text.js';

/**
 * Converts increasing UTF-16 offsets of one text into code point offsets (what SQLite's substr()
 * counts), so a snippet can fetch a few hundred characters of text instead of all of it.
 */
function codePointCounter(text: string): (utf16Offset: number) => number {
  if (!HIGH_SURROGATE.test(text)) return (offset) => offset;
  let utf16 = 0;
  let codePoints = 0;
  return (offset) => {
    for (; utf16 < offset; utf16 += 1) {
      const code = text.charCodeAt(utf16);
      if (code < 0xd800 || code > 0xdbff) codePoints += 1;
    }
    return codePoints;
  };
}

/**
 * Reads guides into tokens (the expensive half of building the index: every word of every guide),
 * independently of the other guides, so that it can run on several threads at once. Token ids are
 * this analyzer's own (its vocabulary grows as it meets new tokens); SearchIndexBuilder maps them
 * to the index's.
 */
export class SearchAnalyzer {
  /** Token texts by id, in order of first appearance; only ever appended to. */
  readonly vocabulary: string[] = [];
  private readonly termIds = new Map<string, number>();
  /**
   * Word as written → its token ids, so that each word of text costs one lookup instead of being
   * normalized again: a token id, -1 for no token, or -2 - i for several (severalIds[i]).
   */
  private readonly words = new WordTable();
  private readonly severalIds: number[][] = [];
  /** Per vocabulary id: its index in the current guide's distinct terms, or -1. */
  private localIndex = new Int32Array(1024).fill(-1);
  private terms = new Uint32Array(256);
  private bodyCounts = new Uint32Array(256);
  private sequence = new Uint32Array(4096);
  private readonly checkpoints = new VarintWriter(64);

  private termId(token: string): number {
    let id = this.termIds.get(token);
    if (id === undefined) {
      id = this.vocabulary.length;
      this.termIds.set(token, id);
      this.vocabulary.push(token);
      if (id >= this.localIndex.length) {
        const grown = new Int32Array(this.localIndex.length * 2).fill(-1);
        grown.set(this.localIndex);
        this.localIndex = grown;
      }
    }
    return id;
  }

  /** `words` is this analyzer's memo: a word met again is never normalized again, so tokensOfWord's would only double the memory. */
  private addWord(word: string, hash: number): number {
    const ids = wordTokens(word).map((token) => this.termId(token));
    const value = ids.length === 1 ? (ids[0] as number) : ids.length === 0 ? -1 : -2 - (this.severalIds.push(ids) - 1);
    this.words.set(word, hash, value);
    return value;
  }

  analyze(title: string, summary: string, tags: readonly string[], plainText: string): DocTerms {
    const texts = [title, summary, tags.join(' '), plainText];
    const columnLengths = [0, 0, 0, 0];
    const { checkpoints, words } = this;
    checkpoints.length = 0;
    let checkpointCount = 0;
    let distinct = 0;
    let count = 0;
    let { terms, bodyCounts, sequence } = this;
    for (let column = 0; column < COLUMNS; column += 1) {
      const text = texts[column] as string;
      const isBody = column === COLUMNS - 1;
      const codePointOf = codePointCounter(text);
      const columnStart = count;
      let nextCheckpoint = 0;
      const length = text.length;
      let index = 0;
      // The words of the text, as forEachWord finds them, hashed as WordTable wants (inline: the
      // loop runs for every word of every guide).
      while (index < length) {
        let code = text.charCodeAt(index);
        if (code < 128 ? ASCII_WORD[code] === 0 : !isWordCode(text, index, code)) {
          index += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
          continue;
        }
        const start = index;
        let hash = FNV_OFFSET;
        while (index < length) {
          code = text.charCodeAt(index);
          if (code < 128) {
            if (ASCII_WORD[code] === 0) break;
            hash = Math.imul(hash ^ code, FNV_PRIME);
            index += 1;
          } else {
            if (!isWordCode(text, index, code)) break;
            const step = code >= 0xd800 && code <= 0xdbff ? 2 : 1;
            for (let i = 0; i < step; i += 1) hash = Math.imul(hash ^ text.charCodeAt(index + i), FNV_PRIME);
            index += step;
          }
        }
        let value = words.get(text, start, index, hash);
        if (value === ABSENT) value = this.addWord(text.slice(start, index), hash);
        if (value === -1) continue;
        // A checkpoint is the first token of a word, about every CHECKPOINT_EVERY tokens.
        if (isBody && count - columnStart >= nextCheckpoint) {
          checkpoints.push(count - columnStart);
          checkpoints.push(codePointOf(start));
          checkpointCount += 1;
          nextCheckpoint = count - columnStart + CHECKPOINT_EVERY;
        }
        const several = value >= 0 ? undefined : (this.severalIds[-value - 2] as number[]);
        const tokenCount = several ? several.length : 1;
        if (count + tokenCount > sequence.length) sequence = grownUint32(sequence, count + tokenCount);
        const localIndex = this.localIndex;
        for (let i = 0; i < tokenCount; i += 1) {
          const id = several ? (several[i] as number) : value;
          let local = localIndex[id] as number;
          if (local < 0) {
            local = distinct;
            distinct += 1;
            localIndex[id] = local;
            if (local >= terms.length) {
              terms = grownUint32(terms, local + 1);
              bodyCounts = grownUint32(bodyCounts, local + 1);
            }
            terms[local] = id;
            bodyCounts[local] = 0;
          }
          if (isBody) bodyCounts[local] = (bodyCounts[local] as number) + 1;
          sequence[count] = local;
          count += 1;
        }
      }
      columnLengths[column] = count - columnStart;
    }
    this.terms = terms;
    this.bodyCounts = bodyCounts;
    this.sequence = sequence;
    for (let i = 0; i < distinct; i += 1) this.localIndex[terms[i] as number] = -1;

    const header = new VarintWriter(16 + checkpoints.length);
    for (const length of columnLengths) header.push(length);
    header.push(checkpointCount);
    header.bytes.set(checkpoints.bytes.subarray(0, checkpoints.length), header.length);
    header.length += checkpoints.length;
    return packDocTerms(
      header.bytes.subarray(0, header.length),
      terms.subarray(0, distinct),
      bodyCounts.subarray(0, distinct),
      sequence.subarray(0, count),
    );
  }

  /** A published guide's search document, without the vocabulary (to send to another thread). */
  searchDocData(guide: GuideRecord): SearchDocData {
    return {
      card: searchCardJson(guide),
      head: headOf(guide.plainText),
      publishedMs: Date.parse(guide.publishedAt as string),
      terms: this.analyze(guide.title, guide.summary, guide.tags, guide.plainText),
    };
  }

  /** A published guide's search document. */
  searchDoc(guide: GuideRecord): SearchDoc {
    return { ...this.searchDocData(guide), vocabulary: this.vocabulary };
  }
}

function grownUint32(array: Uint32Array, atLeast: number): Uint32Array<ArrayBuffer> {
  const grown = new Uint32Array(Math.max(array.length * 2, atLeast));
  grown.set(array);
  return grown;
}

/**
 * Snippets: a hit's best passage with the matched words wrapped in `**`. The window with the most
 * distinct query terms is found in the body's token ids (else in the first short column with a
 * hit), and its words are read from the nearest checkpoint of the stored text (a few hundred
 * characters, not the whole guide).
 */
import type { Database } from 'better-sqlite3';
import { snippetSpacing } from '../../../guides/snippet.js';
import { DocTokens, SNIPPET_TOKENS, TERM_SCRATCH, scratch } from './sqlite-doc-tokens.js';
import { TEXT_PART_CHARS, VarintWriter } from './sqlite-index-format.js';
import { expansionsOf } from './sqlite-index-reader.js';
import type { IndexReader, LoadedIndex } from './sqlite-index-reader.js';
import type { ResolvedTerm } from './sqlite-postings.js';
import type { SearchHit, SearchResult } from './sqlite-rank.js';
import { forEachWord, isPlainWord, tokensOfWord } from './sqlite-text.js';

/**
 * A search whose terms count this many token ids or fewer finds a body's snippet window by
 * searching the body's bytes for each id (Buffer.indexOf, native) instead of decoding every token
 * id (DocTokens.searchBodyWindow). More ids (short prefixes) are decoded: one pass over the body
 * then costs less than a search per id.
 */
export const SNIPPET_SEARCH_MAX_IDS = 8;
const BODY = 3;

export interface Snippets {
  /** Guide `docno`'s search document: its card, the head of its text, its token ids. */
  docTokens(docno: number): DocTokens;
  /** The hit's best passage, its matched words wrapped in `**`. */
  snippetOf(result: SearchResult, hit: SearchHit, doc: DocTokens): string;
}

/** `snippetSearchMaxIds`: searches with at most this many query token ids find body windows by byte search (0: always decode). */
export function createSnippets(db: Database, reader: IndexReader, snippetSearchMaxIds = SNIPPET_SEARCH_MAX_IDS): Snippets {
  const statements = {
    // As an array, not an object with named properties: cheaper a row, and a page reads 21 rows.
    docTokens: db.prepare<[number], [Buffer, string, string]>('SELECT tokens, card, head FROM search_docs WHERE docno = ?').raw(true),
    // Ids are guide id × 65,536 + part (see migration 4): a guide's parts from a given one are a rowid range.
    textParts: db
      .prepare<[number, number, number], string>('SELECT text FROM guide_text_parts WHERE id >= ? AND id < ? ORDER BY id LIMIT ?')
      .pluck(),
    // One part by id: several times cheaper than the range query above with LIMIT 1.
    textPart: db.prepare<[number], string>('SELECT text FROM guide_text_parts WHERE id = ?').pluck(),
  };

  return {
    docTokens(docno) {
      const row = statements.docTokens.get(docno);
      return row ? new DocTokens(row[0], row[1], row[2]) : new DocTokens(Buffer.alloc(0), '{"slug":""', '');
    },

    snippetOf(result, hit, doc) {
      // The index the search ran on (not re-read: a snippet belongs to its search).
      const index = result.index ?? reader.current();
      markTerms(index, result, snippetSearchMaxIds);
      const { termCacheGeneration, termCacheValue } = index.scratch;
      const generation = result.generation;
      const termOf = (id: number): number => (termCacheGeneration[id] === generation ? (termCacheValue[id] as number) : -1);

      // The body's best window, else (no hit in the body) the first column that has one: summary,
      // title, tags. The body is decoded and classified only as far as the scan gets.
      const wanted = result.terms.length;
      let column = BODY;
      let length = doc.bodyLength;
      let termAt = scratch(TERM_SCRATCH, length);
      const classifyBody = (from: number, to: number): void =>
        doc.classifyBody(termAt, from, to, termCacheGeneration, termCacheValue, generation);
      let best = result.patterns
        ? doc.searchBodyWindow(result.patterns, wanted)
        : doc.bestBodyWindow(termCacheGeneration, termCacheValue, generation, wanted);
      if (best.distinct <= 0) {
        for (const other of [1, 0, 2]) {
          const ids = doc.column(other);
          const candidate = Int32Array.from(ids, termOf);
          if (!candidate.some((i) => i >= 0)) continue;
          column = other;
          termAt = candidate;
          length = ids.length;
          best = bestWindow(termAt, length, wanted);
          break;
        }
      }
      let bestStart = best.start;
      const width = Math.min(SNIPPET_TOKENS, length);
      if (column === BODY) classifyBody(bestStart, bestStart + width);
      // Start a little before the window's first hit rather than on unrelated words.
      let firstHit = bestStart;
      while (firstHit < bestStart + width - 1 && (termAt[firstHit] as number) < 0) firstHit += 1;
      bestStart = Math.max(0, Math.min(firstHit - 2, length - width));
      const end = Math.min(length, bestStart + SNIPPET_TOKENS);
      if (column === BODY) classifyBody(bestStart, end);

      // The window's words: from the column text (short columns) or from a slice of the body read
      // from the nearest checkpoint before the window.
      const window: SnippetWindow = { text: '', fromOffset: 0, tokenIndex: 0, start: bestStart, end, length, isTruncated: false, termAt };
      let firstPart = 0;
      let fromCodePoint = 0;
      if (column === BODY) {
        ({ tokenIndex: window.tokenIndex, codePoint: fromCodePoint } = doc.checkpointBefore(bestStart));
        // The part holding the checkpoint, and the next one when the checkpoint is late in it: the
        // window rarely needs more. The first part comes with the document (its head), so it is
        // never read again: a checkpoint late in it reads only the second part.
        firstPart = Math.floor(fromCodePoint / TEXT_PART_CHARS);
        const isLate = fromCodePoint - firstPart * TEXT_PART_CHARS > TEXT_PART_CHARS - 400;
        if (firstPart === 0 && !isLate) {
          window.text = doc.head;
          window.isTruncated = window.text.length >= TEXT_PART_CHARS;
        } else {
          const id = hit.guideId * 65536 + firstPart;
          window.text =
            (firstPart === 0 ? doc.head : (statements.textPart.get(id) ?? '')) + (isLate ? (statements.textPart.get(id + 1) ?? '') : '');
          window.isTruncated = true;
        }
      } else {
        const card = doc.fields();
        window.text = [card.title, card.summary, card.tags.join(' ')][column] as string;
      }
      window.fromOffset = utf16Offset(window.text, fromCodePoint - firstPart * TEXT_PART_CHARS);
      let out = renderWindow(window);
      if (out === undefined) {
        window.text = statements.textParts.all(hit.guideId * 65536 + firstPart, (hit.guideId + 1) * 65536, -1).join('');
        window.fromOffset = utf16Offset(window.text, fromCodePoint - firstPart * TEXT_PART_CHARS);
        window.isTruncated = false;
        out = renderWindow(window) ?? '';
      }
      return `${bestStart > 0 ? '…' : ''}${out.trim()}${end < length ? '…' : ''}`;
    },
  };
}

/**
 * Marks the query's token ids for `result`'s search, once per search, in the index's memo (token
 * id → query term index; ids not marked: no term), and makes its byte patterns when they are few.
 */
function markTerms({ state, scratch: memo }: LoadedIndex, result: SearchResult, maxIds: number): void {
  if (result.generation === memo.generation && result.generation >= 0) return;
  const { termCacheGeneration, termCacheValue } = memo;
  memo.generation += 1;
  result.generation = memo.generation;
  // Later terms first, so an id two terms share keeps the first one's index.
  const termOfId = new Map<number, number>();
  for (let index = result.terms.length - 1; index >= 0; index -= 1) {
    const term = result.terms[index] as ResolvedTerm;
    const ids = term.prefix !== undefined ? expansionsOf(state, term.prefix) : term.tokenIds;
    for (const id of ids) {
      termCacheGeneration[id] = memo.generation;
      termCacheValue[id] = index;
      if (termOfId.size <= maxIds) termOfId.set(id, index);
    }
  }
  result.patterns =
    termOfId.size <= maxIds
      ? [...termOfId].map(([id, term]) => {
          const bytes = new VarintWriter(5);
          bytes.push(id);
          return { bytes: bytes.toBuffer(), term };
        })
      : undefined;
}

/** A snippet's window and the text it is read from. */
interface SnippetWindow {
  /** The column's text, or a slice of the body's from the checkpoint at `fromOffset` (UTF-16). */
  text: string;
  fromOffset: number;
  /** The token index of the first word at `fromOffset`. */
  tokenIndex: number;
  /** The window's tokens: [start, end) of the column's `length`. */
  start: number;
  end: number;
  length: number;
  /** Whether `text` may end before the column does (a slice of the body). */
  isTruncated: boolean;
  /** Per token: its query term index, or -1. */
  termAt: Int32Array;
}

/**
 * The window's words and the text between them, hits wrapped in `**`; undefined when a truncated
 * slice ended before the window did. Text between words may hold a `*` (titles, summaries):
 * dropped, so `**` only ever marks a hit. Runs of white space become one space. Words joined by one
 * space are copied as one slice of the text (from `run`), so a snippet is a few slices, not two or
 * three new strings a word.
 */
function renderWindow({
  text,
  fromOffset,
  tokenIndex,
  start: bestStart,
  end,
  length,
  isTruncated,
  termAt,
}: SnippetWindow): string | undefined {
  let out = '';
  let run = -1;
  let cursor = -1;
  let lastWordStart = -1;
  let index = tokenIndex;
  let complete = false;
  const flush = (to: number): void => {
    if (run >= 0) out += text.slice(run, to);
    run = -1;
  };
  forEachWord(
    text,
    (start, wordEnd) => {
      const at = index;
      // Plain ASCII words are one token each; others may be none or several (see tokensOfWord).
      index += isPlainWord(text, start, wordEnd) ? 1 : tokensOfWord(text.slice(start, wordEnd)).length;
      if (index === at) return true;
      if (at >= end) {
        complete = true;
        return false;
      }
      // A word cut by the end of a truncated slice is not rendered: read the rest and try again
      // (not counted, so the render is incomplete even when it was the window's last word).
      if (isTruncated && wordEnd >= text.length) {
        index = at;
        return false;
      }
      if (index <= bestStart || start === lastWordStart) return true;
      lastWordStart = start;
      if (cursor >= 0) {
        if (start === cursor + 1 && text.charCodeAt(cursor) === 32) {
          if (run < 0) run = cursor;
        } else {
          flush(cursor);
          out += asGap(text.slice(cursor, start));
        }
      }
      let isHit = false;
      for (let t = Math.max(at, bestStart); t < index && t < end; t += 1) isHit ||= (termAt[t] as number) >= 0;
      if (isHit) {
        flush(start);
        out += `**${text.slice(start, wordEnd)}**`;
      } else if (run < 0) {
        run = start;
      }
      cursor = wordEnd;
      return true;
    },
    fromOffset,
  );
  flush(cursor);
  // A window that reaches the end of the column keeps its closing punctuation.
  if (!complete && end >= length && cursor >= 0) out += asGap(text.slice(cursor));
  return complete || index >= end || !isTruncated ? out : undefined;
}

/**
 * The first SNIPPET_TOKENS-token window of `termAt` (query term index per token, or -1) with the
 * most distinct terms; the scan stops at a window that has all `wanted`. (The body's window is
 * found by DocTokens.bestBodyWindow, which gives the same window without classifying every token.)
 */
function bestWindow(termAt: Int32Array, length: number, wanted: number): { start: number; distinct: number } {
  const counts = new Int32Array(wanted);
  const width = Math.min(SNIPPET_TOKENS, length);
  let distinct = 0;
  let bestStart = 0;
  let bestDistinct = -1;
  for (let last = 0; last < length; last += 1) {
    const entering = termAt[last] as number;
    if (entering >= 0 && (counts[entering] = (counts[entering] as number) + 1) === 1) distinct += 1;
    const first = last - width + 1;
    if (first > 0) {
      const leaving = termAt[first - 1] as number;
      if (leaving >= 0 && (counts[leaving] = (counts[leaving] as number) - 1) === 0) distinct -= 1;
    }
    if (first >= 0 && distinct > bestDistinct) {
      bestStart = first;
      bestDistinct = distinct;
      if (distinct === wanted) break;
    }
  }
  return { start: bestStart, distinct: bestDistinct };
}

/** The UTF-16 offset of the code point at `codePoints` in `text` (they differ only past astral characters). */
function utf16Offset(text: string, codePoints: number): number {
  if (!/[\uD800-\uDBFF]/.test(text)) return codePoints;
  let offset = 0;
  for (let seen = 0; seen < codePoints && offset < text.length; seen += 1) {
    const code = text.charCodeAt(offset);
    offset += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
  }
  return offset;
}

/** Text between a snippet's words as the snippet shows it: without `*` (only hits are marked), spaced by snippetSpacing. */
function asGap(text: string): string {
  return snippetSpacing(text.replaceAll('*', ''));
}

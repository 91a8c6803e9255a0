/**
 * User search text → terms. This is the only place that reads the syntax of `q`; the store turns
 * the terms into its engine's query language, quoting every word, so no input is ever an operator.
 *
 * Rules (contract, "GET /api/v1/guides"): words are runs of letters, digits and combining marks;
 * every other character separates words; `"double quotes"` make a phrase (an unclosed quote runs
 * to the end); every term must match; the last term, when it is a bare word, also matches as a prefix.
 */

export interface SearchTerm {
  /** One word, or several for a phrase. Lowercase, NFKC-normalized. */
  words: string[];
  /** Match words[0] as a prefix (only ever set on the last, single-word term). */
  isPrefix: boolean;
}

export interface SearchQuery {
  /** The trimmed text as the client sent it; cursors carry it to continue the same search. */
  text: string;
  terms: SearchTerm[];
}

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

function wordsOf(segment: string): string[] {
  return segment.match(WORD) ?? [];
}

export function parseSearchQuery(text: string): SearchQuery {
  const trimmed = text.trim();
  const terms: SearchTerm[] = [];
  let isLastQuoted = false;
  trimmed
    .normalize('NFKC')
    .toLowerCase()
    .split('"')
    .forEach((segment, index) => {
      const isQuoted = index % 2 === 1;
      const words = wordsOf(segment);
      if (words.length === 0) return;
      if (isQuoted) terms.push({ words, isPrefix: false });
      else for (const word of words) terms.push({ words: [word], isPrefix: false });
      isLastQuoted = isQuoted;
    });
  const last = terms.at(-1);
  if (last && !isLastQuoted) last.isPrefix = true;
  return { text: trimmed, terms };
}

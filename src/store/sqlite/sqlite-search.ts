/** Search terms → an FTS5 MATCH expression in which every word is a quoted string, never an operator. */
import type { SearchQuery } from '../../guides/search-query.js';

/** Column weights for bm25(): title, summary, tags, body. */
export const SQLITE_COLUMN_WEIGHTS = [10, 4, 3, 1] as const;

export function toFts5Expression(query: SearchQuery): string {
  // Words hold only letters, digits and marks (see parseSearchQuery), so quoting cannot be escaped.
  return query.terms
    .map((term) => `"${term.words.join(' ').replaceAll('"', '""')}"${term.isPrefix ? ' *' : ''}`)
    .join(' AND ');
}

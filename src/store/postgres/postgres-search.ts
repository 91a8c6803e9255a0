/**
 * Search terms → one tsquery, built inside PostgreSQL from bound parameters. User text never
 * becomes tsquery syntax: phrases and words go through phraseto_tsquery (which reads plain text
 * and cannot raise a syntax error), and the prefix word goes through to_tsvector first; only the
 * lexeme that comes out is quoted (backslash and quote escaped) and marked `:*`. A term that
 * yields no lexeme makes the whole search match nothing (it is never silently dropped, which
 * `&&` with an empty tsquery would do), so "every term must match" holds.
 */
import type { SearchQuery } from '../../guides/search-query.js';
import { SEARCH_CONFIG } from './postgres-schema.js';

/** ts_rank_cd weights in PostgreSQL's order {D, C, B, A}: body, tags, summary, title (as SQLite's 1, 3, 4, 10). */
export const POSTGRES_RANK_WEIGHTS = '{0.1, 0.3, 0.4, 1.0}';

/** Options for ts_headline: `**` marks, one fragment of the best-matching passage. */
export const HEADLINE_OPTIONS = 'StartSel=**, StopSel=**, MaxFragments=1, MaxWords=24, MinWords=12, ShortWord=2, FragmentDelimiter=" … "';

export interface SearchParameters {
  /** Terms matched as whole words or phrases (each is one or more words joined by spaces). */
  phrases: string[];
  /** The last word, matched as a prefix; null when the query ends with a phrase. */
  prefix: string | null;
}

export function toSearchParameters(query: SearchQuery): SearchParameters {
  const phrases: string[] = [];
  let prefix: string | null = null;
  for (const term of query.terms) {
    // Words are runs of letters, digits and marks (parseSearchQuery): no NUL (SQLSTATE 22021) and no
    // other control character can be among them. Stripping again keeps this true if that rule changes.
    const words = term.words.map((word) => word.replaceAll('\u0000', '')).filter((word) => word !== '');
    if (words.length === 0) continue;
    if (term.isPrefix && words.length === 1) prefix = words[0]!;
    else phrases.push(words.join(' '));
  }
  return { phrases, prefix };
}

/**
 * A CTE named `search` with one row: `query` (the tsquery) and `ok` (false when a term produced
 * no lexeme, or there is no term). Parameters: $1 text[] phrases, $2 text prefix word or null.
 */
export const SEARCH_QUERY_CTE = `
  search_terms AS (
    SELECT phraseto_tsquery('${SEARCH_CONFIG}', phrase) AS tq FROM unnest($1::text[]) AS phrase
    UNION ALL
    SELECT (
      SELECT coalesce(string_agg(
          '''' || replace(replace(lexeme, E'\\\\', E'\\\\\\\\'), '''', '''''') || ''':*', ' <-> ' ORDER BY positions[1]), '')::tsquery
        FROM unnest(to_tsvector('${SEARCH_CONFIG}', $2::text))
    ) AS tq
    WHERE $2::text IS NOT NULL
  ),
  search AS (
    SELECT guides_tsquery_and(tq) AS query, coalesce(bool_and(numnode(tq) > 0), false) AS ok FROM search_terms
  )`;

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
const HEADLINE_OPTIONS = 'StartSel=**, StopSel=**, MaxFragments=1, MaxWords=24, MinWords=12, ShortWord=2';
/** The cheaper cover-based ts_headline, for the rare guide whose first window has no match. */
const FALLBACK_HEADLINE_OPTIONS = 'StartSel=**, StopSel=**, MaxWords=24, MinWords=12, ShortWord=2';
/** Characters of the snippet source searched first (about 400 words). */
const SNIPPET_WINDOW = 3000;

export interface SearchParameters {
  /** Terms matched as whole words or phrases (each is one or more words joined by spaces). */
  phrases: string[];
  /**
   * Words matched as prefixes: the last word of a parsed query (none when it ends with a phrase).
   * Every prefix term counts, so terms made by hand with several prefixes lose none of them.
   */
  prefixes: string[];
}

export function toSearchParameters(query: SearchQuery): SearchParameters {
  const phrases: string[] = [];
  const prefixes: string[] = [];
  for (const term of query.terms) {
    // Words are runs of letters, digits and marks (parseSearchQuery): no NUL (SQLSTATE 22021) and no
    // other control character can be among them. Stripping again keeps this true if that rule changes.
    const words = term.words.map((word) => word.replaceAll('\u0000', '')).filter((word) => word !== '');
    if (words.length === 0) continue;
    if (term.isPrefix && words.length === 1) prefixes.push(words[0]!);
    else phrases.push(words.join(' '));
  }
  return { phrases, prefixes };
}

/**
 * A CTE named `search` with one row: `query` (the tsquery) and `ok` (false when a term produced
 * no lexeme, or there is no term). Parameters: $1 text[] phrases, $2 text[] prefix words.
 */
export const SEARCH_QUERY_CTE = `
  search_terms AS (
    SELECT phraseto_tsquery('${SEARCH_CONFIG}', phrase) AS tq FROM unnest($1::text[]) AS phrase
    UNION ALL
    SELECT (
      SELECT coalesce(string_agg(
          '''' || replace(replace(lexeme, E'\\\\', E'\\\\\\\\'), '''', '''''') || ''':*', ' <-> ' ORDER BY positions[1]), '')::tsquery
        FROM unnest(to_tsvector('${SEARCH_CONFIG}', prefix))
    ) AS tq
    FROM unnest($2::text[]) AS prefix
  ),
  search AS (
    SELECT guides_tsquery_and(tq) AS query, guides_tsquery_or(tq) AS any_query,
      coalesce(bool_and(numnode(tq) > 0), false) AS ok
    FROM search_terms
  )`;

/**
 * The snippet of one result row (`g` the guide, `s` the search; a LATERAL subquery). Its source is
 * the first field that matches the whole query: the body's plain text (Markdown removed, so a `**`
 * can only be ours), else the summary, else the title (their own `*` removed). When the terms are
 * spread over several fields, no field matches the whole query: then the snippet comes from all
 * of them (title, summary, body) and marks every term (`any_query`). ts_headline marks nothing
 * where the whole query does not match within a short passage, so a snippet without marks is
 * made again with `any_query`.
 *
 * ts_headline re-parses its text and its cost grows faster than the text (the fragment mode
 * enumerates every cover): on 2,000-word guides it was most of a search's time. So it reads the
 * first SNIPPET_WINDOW characters (cut at a word boundary), and only when no term is marked there
 * the whole text, with the cheaper cover-based mode. OFFSET 0 keeps PostgreSQL from inlining the
 * subqueries, which would compute the same headline several times.
 *
 * ts_headline gives a fragment of its text as it stands, marks added: without them it is a
 * substring of the source, so `snippet_at_start` and `snippet_at_end` say whether it begins and
 * ends where the source does (the store adds `…` where not, as the SQLite store does).
 */
export const SNIPPET_SELECT = `
  SELECT chosen.text AS snippet,
    starts_with(source.text, unmarked.text) AS snippet_at_start,
    right(source.text, length(unmarked.text)) = unmarked.text AS snippet_at_end
  FROM (
    SELECT CASE
      WHEN ts_filter(g.search_vector, '{d}') @@ s.query THEN 'body'
      WHEN ts_filter(g.search_vector, '{b}') @@ s.query THEN 'summary'
      WHEN g.title_vector @@ s.query THEN 'title'
      ELSE 'spread'
    END AS field OFFSET 0
  ) AS matched
  CROSS JOIN LATERAL (
    SELECT CASE matched.field
        WHEN 'body' THEN g.plain_text
        WHEN 'summary' THEN replace(g.summary, '*', '')
        WHEN 'title' THEN replace(g.title, '*', '')
        ELSE concat_ws(E'\\n', replace(g.title, '*', ''), replace(g.summary, '*', ''), g.plain_text)
      END AS text,
      CASE WHEN matched.field = 'spread' THEN s.any_query ELSE s.query END AS query
    OFFSET 0
  ) AS source
  CROSS JOIN LATERAL (
    SELECT CASE WHEN length(source.text) > ${SNIPPET_WINDOW} THEN regexp_replace(left(source.text, ${SNIPPET_WINDOW + 1}), '\\S*$', '')
      ELSE source.text END AS text
    OFFSET 0
  ) AS win
  CROSS JOIN LATERAL (
    SELECT ts_headline('${SEARCH_CONFIG}', win.text, source.query, '${HEADLINE_OPTIONS}') AS text OFFSET 0
  ) AS head
  -- Only when the whole query marked nothing in the window (its terms lie too far apart there).
  LEFT JOIN LATERAL (
    SELECT ts_headline('${SEARCH_CONFIG}', win.text, s.any_query, '${HEADLINE_OPTIONS}') AS text
    WHERE position('**' in head.text) = 0 AND matched.field <> 'spread'
    OFFSET 0
  ) AS anyterm ON true
  CROSS JOIN LATERAL (
    SELECT CASE
        WHEN position('**' in head.text) > 0 THEN head.text
        WHEN position('**' in coalesce(anyterm.text, '')) > 0 OR length(source.text) <= ${SNIPPET_WINDOW} THEN coalesce(anyterm.text, head.text)
        ELSE ts_headline('${SEARCH_CONFIG}', source.text, s.any_query, '${FALLBACK_HEADLINE_OPTIONS}')
      END AS text
    OFFSET 0
  ) AS chosen
  CROSS JOIN LATERAL (SELECT replace(chosen.text, '**', '') AS text OFFSET 0) AS unmarked`;

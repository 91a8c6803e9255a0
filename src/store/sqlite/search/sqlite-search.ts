/**
 * Search over the embedded index (built by sqlite-index-builder.ts): terms → matching documents,
 * BM25F relevance with column weights, keyset pages, snippets. See docs/search.md for the design.
 * This file wires the parts: the index as loaded (sqlite-index-reader.ts), query terms as posting
 * sources (sqlite-postings.ts), ranking (sqlite-rank.ts) and snippets (sqlite-snippet.ts).
 */
import type { Database } from 'better-sqlite3';
import type { SearchPosition } from '../../../guides/cursor.js';
import type { GuideSummaryData } from '../../../guides/guide.js';
import type { SearchQuery } from '../../../guides/search-query.js';
import type { SearchCardItem, SearchCardPage } from '../../../representation/rendered-page.js';
import type { GuideStore, Page } from '../../guide-store.js';
import { createIndexReader } from './sqlite-index-reader.js';
import { createPostingSources } from './sqlite-postings.js';
import type { PostingSourcesOptions } from './sqlite-postings.js';
import { createRanker } from './sqlite-rank.js';
import type { SearchHit, SearchResult } from './sqlite-rank.js';
import { createSnippets } from './sqlite-snippet.js';

export type { SearchHit, SearchResult } from './sqlite-rank.js';

export type SearchPageOptions = Parameters<GuideStore['searchPublishedGuides']>[0];

export interface SqliteSearch {
  /** Loads the index of the current content version now, if not loaded yet (else the next search does). */
  warm(): void;
  /** Up to `count` hits strictly after `after`, best first. */
  search(query: SearchQuery, count: number, after: SearchPosition | undefined): SearchResult;
  /** A hit's summary fields, and a snippet: its best passage with the matched words wrapped in `**`. */
  present(result: SearchResult, hit: SearchHit): GuideSummaryData;
  /** The same as its search card (searchCardJson) and snippet, for a page rendered from cards (representation/search-cards-body.ts). */
  presentCard(result: SearchResult, hit: SearchHit): SearchCardItem;
}

export interface SqliteSearchOptions extends PostingSourcesOptions {
  /** Bytes of posting lists kept as read (default POSTINGS_CACHE_BYTES). */
  postingsCacheBytes?: number;
  /** Searches with at most this many query token ids find snippet windows by byte search (default SNIPPET_SEARCH_MAX_IDS; 0: always decode). */
  snippetSearchMaxIds?: number;
}

export function createSqliteSearch(db: Database, options: SqliteSearchOptions = {}): SqliteSearch {
  const reader = createIndexReader(db, options.postingsCacheBytes);
  const sources = createPostingSources(reader, options);
  const ranker = createRanker(db);
  const snippets = createSnippets(db, reader, options.snippetSearchMaxIds);

  return {
    warm() {
      reader.current();
    },
    search(query, count, after) {
      const index = reader.current();
      // Lists resolved from here on stay in their caches until this search has scored them.
      reader.turn();
      sources.turn();
      const empty: SearchResult = { hits: [], terms: [], generation: -1 };
      if (index.state.docCount === 0) return empty;
      const terms = sources.resolve(index, query);
      if (!terms || terms.length === 0) return empty;
      return { hits: ranker.rank(index, terms, count, after), terms, generation: -1, index };
    },
    present(result, hit) {
      const doc = snippets.docTokens(hit.docno);
      return { ...doc.fields(), snippet: snippets.snippetOf(result, hit, doc) };
    },
    presentCard(result, hit) {
      const doc = snippets.docTokens(hit.docno);
      return { card: doc.card, slug: doc.slug, snippet: snippets.snippetOf(result, hit, doc) };
    },
  };
}

/** A page of a search: `limit` summaries with snippets, and the position to continue from when more follow. */
export function searchPage(search: SqliteSearch, options: SearchPageOptions): Page<SearchPosition> {
  // Summaries come from the index (which holds published guides only), not from the guides rows.
  return pageOf(search, options, (result, hit) => search.present(result, hit));
}

/** The same page as cards (see SearchCardItem), for rendering where the search ran. */
export function searchCardPage(search: SqliteSearch, options: SearchPageOptions): SearchCardPage {
  return pageOf(search, options, (result, hit) => search.presentCard(result, hit));
}

function pageOf<T extends { slug: string }>(
  search: SqliteSearch,
  { query, limit, after }: SearchPageOptions,
  present: (result: SearchResult, hit: SearchHit) => T,
): { items: T[]; next?: SearchPosition } {
  const result = search.search(query, limit + 1, after);
  const items: T[] = [];
  let next: SearchPosition | undefined;
  for (const hit of result.hits.slice(0, limit)) {
    const item = present(result, hit);
    items.push(item);
    next = { score: hit.score, publishedMs: hit.publishedMs, slug: item.slug };
  }
  return { items, ...(result.hits.length > limit && next ? { next } : {}) };
}

/**
 * A page of search cards (the SQLite index's: each result's JSON up to `url`, written by
 * JSON.stringify in the list schema's field order) as its response body: what a search worker
 * thread renders, hashes and compresses, so that the event loop only sends the bytes. The same
 * bytes as guideListBody gives for the page's guides (test/store/sqlite/search/sqlite-search-pool.test.ts).
 */
import { guideUrl, renderPage } from './rendered-page.js';
import type { RenderedSearchPage, SearchCardItem, SearchCardPage, SearchRendering } from './rendered-page.js';

/**
 * A page of search cards as response bytes: each card with its `url` and `snippet`. No card is
 * parsed and no object serialized: a worker's whole page (search, snippets, body, hash) takes a few
 * per cent fewer instructions than parsing the cards and serializing the page.
 */
export function searchCardsBody(items: readonly SearchCardItem[], urlBase: string, nextCursor?: string): Buffer {
  let json = '{"items":[';
  for (let i = 0; i < items.length; i += 1) {
    const { card, slug, snippet } = items[i] as SearchCardItem;
    json += `${i > 0 ? ',' : ''}${card},"url":${JSON.stringify(guideUrl(urlBase, slug))},"snippet":${JSON.stringify(snippet)}}`;
  }
  json += nextCursor === undefined ? ']}' : `],"nextCursor":${JSON.stringify(nextCursor)}}`;
  return Buffer.from(json, 'utf8');
}

/** A page of search cards as its response (see renderPage). */
export function renderSearchCardPage(page: SearchCardPage, q: string, rendering: SearchRendering): RenderedSearchPage {
  return renderPage(page.next, q, rendering, (nextCursor) => searchCardsBody(page.items, rendering.urlBase, nextCursor));
}

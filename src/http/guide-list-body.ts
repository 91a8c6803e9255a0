/**
 * The body of a guide list or search page. Every page of `GET /api/v1/guides` is made here, on
 * whichever thread makes the page: the event loop, or a search worker thread
 * (sqlite-search-worker.ts), which renders, hashes and compresses a search page so that the event
 * loop only sends the bytes. Pages of guides are serialized with the route's response schema and
 * fast-json-stringify (the serializer Fastify itself compiles for a route); pages of search cards
 * (the SQLite index's: each result's JSON up to `url`, written by JSON.stringify in the schema's
 * field order) are joined, and are the same bytes (test/store/sqlite-search-pool.test.ts).
 */
import fastJson from 'fast-json-stringify';
import { createCursorCodec } from '../guides/cursor.js';
import type { CursorCodec, SearchPosition } from '../guides/cursor.js';
import type { GuideSummaryData } from '../guides/guide.js';
import type { Page, RenderedSearchPage, SearchCardItem, SearchCardPage, SearchRendering } from '../store/guide-store.js';
import { COMPRESSION_THRESHOLD_BYTES, compressBody, representationHash } from './representation.js';
import { GuideListSchema, GuideSummarySchema } from './schemas/guide.js';
import type { GuideList, GuideSummary } from './schemas/guide.js';

// Compiled on first use, not on import: loading this module is part of every start-up.
let compiled: ((list: GuideList) => string) | undefined;
const stringify = (list: GuideList): string =>
  (compiled ??= fastJson(GuideListSchema, { schema: { GuideSummary: GuideSummarySchema } }) as (list: GuideList) => string)(list);

/** A guide's own URL in the API. */
export function guideUrl(urlBase: string, slug: string): string {
  return `${urlBase}/api/v1/guides/${slug}`;
}

/**
 * A guide as the list's schema has it, built field by field: every item then has one shape, and the
 * serializer reads its fields at full speed. Items copied with `{ ...guide, url }` came out with
 * shapes V8 could not predict, and serializing a page of 20 search results cost 80-150 µs instead
 * of 35-55 (2026-11-26, 10k guides, in process).
 */
function listItem(guide: GuideSummaryData, urlBase: string): GuideSummary {
  return {
    slug: guide.slug,
    title: guide.title,
    summary: guide.summary,
    tags: guide.tags,
    language: guide.language,
    publishedAt: guide.publishedAt,
    updatedAt: guide.updatedAt,
    readingTimeMinutes: guide.readingTimeMinutes,
    url: guideUrl(urlBase, guide.slug),
    // Left out of the JSON when undefined (list pages).
    snippet: guide.snippet,
  };
}

/** The page as response bytes (UTF-8 JSON). */
export function guideListBody(items: readonly GuideSummaryData[], urlBase: string, nextCursor?: string): Buffer {
  return Buffer.from(stringify({
    items: items.map((guide) => listItem(guide, urlBase)),
    ...(nextCursor === undefined ? {} : { nextCursor }),
  }), 'utf8');
}

/**
 * A page of search cards as response bytes: each card with its `url` and `snippet`, the same bytes
 * as guideListBody gives for the page's guides. No card is parsed and no object serialized: a
 * worker's whole page (search, snippets, body, hash) took 4.5–4.7 % fewer instructions than parsing
 * the cards and serializing the page (callgrind, 800 pages of 20 results of 10k guides, common
 * terms and prefixes, 2026-11-28; docs/search-measurements.md).
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

let codec: { key: Buffer; codec: CursorCodec } | undefined;

/**
 * A search page as its response: body, hash, next cursor (for the search text `q`), and the body
 * compressed with the coding asked for (see SearchRendering). The route renders with it too when
 * the store searched on the event loop, so a page has the same bytes wherever it was made.
 */
export function renderSearchPage(page: Page<SearchPosition>, q: string, rendering: SearchRendering): RenderedSearchPage {
  return rendered(page.next, q, rendering, (nextCursor) => guideListBody(page.items, rendering.urlBase, nextCursor));
}

/** The same for a page of search cards (a search worker's, see searchCardsBody). */
export function renderSearchCardPage(page: SearchCardPage, q: string, rendering: SearchRendering): RenderedSearchPage {
  return rendered(page.next, q, rendering, (nextCursor) => searchCardsBody(page.items, rendering.urlBase, nextCursor));
}

function rendered(next: SearchPosition | undefined, q: string, rendering: SearchRendering, bodyOf: (nextCursor?: string) => Buffer): RenderedSearchPage {
  // From another thread the key arrives as a plain Uint8Array (structured clone).
  if (codec === undefined || Buffer.compare(codec.key, rendering.cursorKey) !== 0) {
    const key = Buffer.from(rendering.cursorKey);
    codec = { key, codec: createCursorCodec([key]) };
  }
  const nextCursor = next ? codec.codec.encode({ kind: 'search', q, after: next }) : undefined;
  const body = bodyOf(nextCursor);
  const { coding } = rendering;
  return {
    body,
    hash: representationHash(body),
    ...(nextCursor === undefined ? {} : { nextCursor }),
    ...(coding !== undefined && body.length >= COMPRESSION_THRESHOLD_BYTES ? { encoded: { coding, body: compressBody(coding, body) } } : {}),
  };
}

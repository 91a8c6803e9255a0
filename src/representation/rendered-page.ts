/**
 * A search page rendered as its response body, wherever it is made: on the event loop, or on a
 * search worker thread (a SearchPageRenderer). Fastify-free, so a worker can load it.
 */
import { createCursorCodec } from '../guides/cursor.js';
import type { CursorCodec, SearchPosition } from '../guides/cursor.js';
import type { SearchQuery } from '../guides/search-query.js';
import { COMPRESSION_THRESHOLD_BYTES, compressBody, representationHash } from './representation.js';
import type { ContentCoding } from './representation.js';

/**
 * A search result as the SQLite index keeps it: its list item's JSON up to `url`, the object left
 * open (searchCardJson in store/sqlite/search/sqlite-index-format.ts), its slug and its snippet.
 */
export interface SearchCardItem {
  card: string;
  slug: string;
  snippet: string;
}

/** A page of search results as cards (rendered by renderSearchCardPage in search-cards-body.ts). */
export interface SearchCardPage {
  items: SearchCardItem[];
  next?: SearchPosition;
}

/** How a SearchPageRenderer renders a search page where the search runs. */
export interface SearchRendering {
  /** The API's public base URL: each item's `url` starts with it. */
  urlBase: string;
  /** Signs the page's next cursor (the cursor codec's signing key). */
  cursorKey: Buffer;
  /** The content coding the client asked for: the body is also sent compressed with it (1 KB and more). */
  coding?: ContentCoding;
}

/** A search page as the response body: its bytes, their hash for the ETag, and the next cursor. */
export interface RenderedSearchPage {
  body: Buffer;
  /** representationHash(body) (representation.ts). */
  hash: string;
  nextCursor?: string;
  /** The body compressed with the coding asked for, when it was worth compressing. */
  encoded?: { coding: ContentCoding; body: Buffer };
}

/**
 * Searches and renders the page as its response body where the search runs: SQLite's search
 * workers, so that the event loop neither receives the page as objects nor serializes or
 * compresses it. A backend that can offers one next to its store (store/open-store.ts); without
 * one, a caller searches the store and renders the page itself (renderSearchPage in
 * guide-list-body.ts): the same bytes.
 */
export interface SearchPageRenderer {
  /** GuideStore.searchPublishedGuides, the page rendered, hashed and compressed (see SearchRendering). */
  renderSearchPage(
    options: { query: SearchQuery; limit: number; after?: SearchPosition },
    rendering: SearchRendering,
  ): Promise<RenderedSearchPage>;
}

/** A guide's own URL in the API. */
export function guideUrl(urlBase: string, slug: string): string {
  return `${urlBase}/api/v1/guides/${slug}`;
}

let codec: { key: Buffer; codec: CursorCodec } | undefined;

/**
 * A search page as its response: the body `bodyOf` makes with the next cursor (for the search
 * text `q`), its hash, and the body compressed with the coding asked for (see SearchRendering).
 */
export function renderPage(
  next: SearchPosition | undefined,
  q: string,
  rendering: SearchRendering,
  bodyOf: (nextCursor?: string) => Buffer,
): RenderedSearchPage {
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
    ...(coding !== undefined && body.length >= COMPRESSION_THRESHOLD_BYTES
      ? { encoded: { coding, body: compressBody(coding, body) } }
      : {}),
  };
}

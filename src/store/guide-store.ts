/**
 * The storage contract. Both backends (SQLite, PostgreSQL) honour every line of it, and one shared
 * test suite (test/store/guide-store.contract.ts) checks that against real databases.
 *
 * - Reads see published guides only, through an access path that holds nothing else.
 * - Lists order by publishedAt desc, then slug asc in byte order; searches by relevance
 *   (lower score first), then publishedAt desc, then slug. Pages continue strictly after a position.
 * - An import is all-or-nothing: readers see the old content or the new, never a mix. It never
 *   deletes: guides that left the folder become archived.
 */
import type {
  ContentSet, GuideDetailData, GuideRecord, GuideStatus, GuideSummaryData, ProductInfo, ResourceLink,
} from '../guides/guide.js';
import type { ListPosition, SearchPosition } from '../guides/cursor.js';
import type { SearchQuery } from '../guides/search-query.js';
import type { SearchDoc } from './sqlite/search/sqlite-index-format.js';

export interface Page<P> {
  items: GuideSummaryData[];
  /** Position of the last item, present only when more items follow it. */
  next?: P;
}

/**
 * A search result as the SQLite index keeps it: its list item's JSON up to `url`, the object left
 * open (searchCardJson in sqlite/search/sqlite-index-format.ts), its slug and its snippet.
 */
export interface SearchCardItem {
  card: string;
  slug: string;
  snippet: string;
}

/** A page of search results as cards (rendered by renderSearchCardPage in http/guide-list-body.ts). */
export interface SearchCardPage {
  items: SearchCardItem[];
  next?: SearchPosition;
}

/** How a store that can renders a search page where the search runs (GuideStore.renderSearchPage). */
export interface SearchRendering {
  /** The API's public base URL: each item's `url` starts with it. */
  urlBase: string;
  /** Signs the page's next cursor (the cursor codec's signing key). */
  cursorKey: Buffer;
  /** The content coding the client asked for: the body is also sent compressed with it (1 KB and more). */
  coding?: 'br' | 'gzip';
}

/** A search page as the response body: its bytes, their hash for the ETag, and the next cursor. */
export interface RenderedSearchPage {
  body: Buffer;
  /** representationHash(body) (http/representation.ts). */
  hash: string;
  nextCursor?: string;
  /** The body compressed with the coding asked for, when it was worth compressing. */
  encoded?: { coding: 'br' | 'gzip'; body: Buffer };
}

export interface GuideIndexEntry {
  slug: string;
  title: string;
  summary: string;
}

export interface ImportSummary {
  created: string[];
  updated: string[];
  unchanged: number;
  /** Guides whose status changed, including those archived because they left the folder. */
  moved: { slug: string; from: GuideStatus; to: GuideStatus }[];
  productChanged: boolean;
  resourcesChanged: boolean;
  /** The content version after the import; it grows only when something changed. */
  contentVersion: number;
}

/** A valid guide read from a content folder, with what the reader prepared for the store. */
export interface PreparedGuide {
  guide: GuideRecord;
  /** hashJson(guide) (content-diff.ts), computed where the guide was read. */
  contentHash: string;
  /** SQLite: the guide's search document (published guides), when the reader prepared it. */
  search?: SearchDoc;
}

/** A content folder whose guides arrive as they are read and validated, in folder order. */
export interface ContentStream {
  product: ProductInfo;
  resources: ResourceLink[];
  /** Throws when the folder turns out to have a problem: the import then changes nothing. */
  guides: AsyncIterable<PreparedGuide>;
}

export interface GuideStore {
  readonly dialect: 'sqlite' | 'postgres';
  /** Creates or upgrades the schema; safe when several processes call it at once. */
  migrate(): Promise<void>;
  /** True before the first import. */
  isEmpty(): Promise<boolean>;
  /** A number that changes whenever an import changes anything; cheap enough to poll. */
  contentVersion(): Promise<number>;
  getProduct(): Promise<ProductInfo | undefined>;
  getResources(): Promise<ResourceLink[]>;
  getPublishedGuide(slug: string): Promise<GuideDetailData | undefined>;
  listPublishedGuides(options: { limit: number; after?: ListPosition }): Promise<Page<ListPosition>>;
  /** Terms must be non-empty; each item carries a snippet with `**` around matched terms. */
  searchPublishedGuides(options: { query: SearchQuery; limit: number; after?: SearchPosition }): Promise<Page<SearchPosition>>;
  /**
   * Optional: searchPublishedGuides with the page rendered as the response body (guide-list-body.ts),
   * hashed and compressed where the search ran. SQLite's search workers do this, so that the event
   * loop neither receives the page as objects nor serializes or compresses it.
   */
  renderSearchPage?(options: { query: SearchQuery; limit: number; after?: SearchPosition }, rendering: SearchRendering): Promise<RenderedSearchPage>;
  /** Every published guide, newest first, for indexes such as /llms.txt. */
  listPublishedIndex(): Promise<GuideIndexEntry[]>;
  importContent(content: ContentSet): Promise<ImportSummary>;
  /**
   * Optional: importContent for a folder being read, writing each guide as it arrives (a large
   * folder is then never held in memory whole, and writing overlaps reading), in one transaction
   * that commits after the last guide or rolls back when the stream throws. Nothing else may use
   * the store until it settles.
   */
  importStream?(content: ContentStream): Promise<ImportSummary>;
  /** The cursor signing key generated once and kept in the database (used when CURSOR_SECRET is unset). */
  cursorKey(): Promise<Buffer>;
  /** Resolves when the database answers a trivial query and searches can run (SQLite: its search workers are up). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by a store when its database cannot be reached; the HTTP layer answers 503. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

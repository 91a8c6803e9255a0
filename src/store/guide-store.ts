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
  ContentSet, GuideDetailData, GuideStatus, GuideSummaryData, ProductInfo, ResourceLink,
} from '../guides/guide.js';
import type { ListPosition, SearchPosition } from '../guides/cursor.js';
import type { SearchQuery } from '../guides/search-query.js';

export interface Page<P> {
  items: GuideSummaryData[];
  /** Position of the last item, present only when more items follow it. */
  next?: P;
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
  /** Every published guide, newest first, for indexes such as /llms.txt. */
  listPublishedIndex(): Promise<GuideIndexEntry[]>;
  importContent(content: ContentSet): Promise<ImportSummary>;
  /** The cursor signing key generated once and kept in the database (used when CURSOR_SECRET is unset). */
  cursorKey(): Promise<Buffer>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by a store when its database cannot be reached; the HTTP layer answers 503. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/**
 * The storage contract. Both backends (SQLite, PostgreSQL) honour every line of it, and one shared
 * test suite (test/store/guide-store.contract.ts) checks that against real databases.
 *
 * - Reads see published guides only, through an access path that holds nothing else.
 * - Lists order by publishedAt desc, then slug asc in byte order; searches by relevance
 *   (lower score first), then publishedAt desc, then slug. Pages continue strictly after a position.
 * - An import is all-or-nothing: readers see the old content or the new, never a mix. It never
 *   deletes: guides that left the folder become archived. A slug given twice refuses it.
 */
import type {
  ContentSet,
  GuideDetailData,
  GuideRecord,
  GuideStatus,
  GuideSummaryData,
  ProductInfo,
  ResourceLink,
} from '../guides/guide.js';
import type { ListPosition, SearchPosition } from '../guides/cursor.js';
import type { SearchQuery } from '../guides/search-query.js';
import type { ExistingGuide } from './import-plan.js';
import type { GuidePreparation } from './prepare-guide.js';

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

/** A valid guide read from a content folder, with what the reader prepared for the store. */
export interface PreparedGuide {
  guide: GuideRecord;
  /** hashJson(guide) (import-plan.ts), computed where the guide was read. */
  contentHash: string;
  /**
   * What the store's guidePreparation computed for the guide while it was read (SQLite: the search
   * document of a published guide), when it asked for any; only that backend reads it.
   */
  search?: unknown;
}

/** A content folder whose guides arrive as they are read and validated, in folder order. */
export interface ContentStream {
  product: ProductInfo;
  resources: ResourceLink[];
  /** Throws when the folder turns out to have a problem: the import then changes nothing. */
  guides: AsyncIterable<PreparedGuide>;
}

export interface GuideStore {
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
  /** Every guide's slug, status and content hash, as an import plans against them (a dry run reads them). */
  existingGuides(): Promise<ExistingGuide[]>;
  /**
   * Optional: importContent for a folder being read, writing each guide as it arrives (a large
   * folder is then never held in memory whole, and writing overlaps reading), in one transaction
   * that commits after the last guide or rolls back when the stream throws. Nothing else may use
   * the store until it settles.
   */
  importStream?(content: ContentStream): Promise<ImportSummary>;
  /** What importStream wants computed per guide while the folder is read; absent: nothing. */
  readonly guidePreparation?: GuidePreparation;
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

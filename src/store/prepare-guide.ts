/**
 * What a backend computes for each guide while a content folder is read, so that the work runs on
 * the reading threads beside parsing (SQLite: the search document of a published guide). content/
 * knows a preparer only through these types, and its worker threads load one by module URL.
 */
import type { GuideRecord } from '../guides/guide.js';

/** One reading thread's preparer; it may keep state across guides (SQLite: a growing vocabulary). */
export interface GuidePreparer {
  /** What the store wants of this guide beyond the record, or undefined; it may cross threads (structured clone). */
  prepare(guide: GuideRecord): unknown;
  /**
   * The entries this preparer added to its dictionary since the last call, in order: preparations
   * refer to entries by position, and the reader keeps the list for each preparer.
   */
  takeNewEntries(): string[];
  /** Buffers inside a preparation that may be moved to the reading thread instead of copied. */
  transferables(prepared: unknown): ArrayBuffer[];
  /** A preparation as the store's importStream takes it, given every entry its preparer has made so far. */
  complete(prepared: unknown, dictionary: readonly string[]): unknown;
}

/** A module a worker thread imports by URL: it makes the thread's own preparer. */
export interface GuidePreparerModule {
  createGuidePreparer(): GuidePreparer;
}

/** How a store asks for per-guide preparation: a preparer for this thread, and the module for others. */
export interface GuidePreparation {
  /** URL of a module whose exports are a GuidePreparerModule. */
  moduleUrl: string;
  create(): GuidePreparer;
}

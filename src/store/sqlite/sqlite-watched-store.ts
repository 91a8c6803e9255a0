/**
 * A serving process keeps its SQLite database open, and an open file outlives its name: deleted,
 * replaced or made unreadable, it would go on serving the old inode forever, and a restored backup
 * would never be seen. This wrapper checks the file every second. While it is missing or unreadable
 * every read fails with StoreUnavailableError (the API answers 503); when a file is back at the
 * path (a new inode, or readable again) it closes the old connection first (so its write-ahead log
 * is checkpointed and removed, never applied to the new file) and opens the new one with
 * fileMustExist, since better-sqlite3 would otherwise create an empty database in its place.
 * Its content version then moves too, so that caches drop what the old file held.
 */
import { accessSync, constants, statSync } from 'node:fs';
import type { GuideStore } from '../guide-store.js';
import { StoreUnavailableError } from '../guide-store.js';
import { createSqliteGuideStore } from './sqlite-guide-store.js';
import type { SqliteGuideStore } from './sqlite-guide-store.js';
import { SQLITE_GUIDE_PREPARATION } from './sqlite-guide-preparer.js';
import type { SearchPageRenderer } from '../../representation/rendered-page.js';
import type { SearchPriority } from './search/sqlite-search-pool.js';

const CHECK_INTERVAL_MS = 1000;

/** The file's identity when it is there and readable; undefined otherwise. */
function identityOf(file: string): string | undefined {
  try {
    accessSync(file, constants.R_OK | constants.W_OK);
    const stat = statSync(file);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * The serving connection's page cache: SQLite's own default, not better-sqlite3's larger one. Guide
 * reads hit rows at random in a file far larger than either, and rendered guides are cached above
 * the store: less memory, reads as fast (docs/performance.md#search-workers).
 */
const SERVING_PAGE_CACHE_KIB = 2048;

export function createWatchedSqliteStore(
  file: string,
  options: { checkIntervalMs?: number; searchWorkers?: number; searchPriority?: SearchPriority } = {},
): SqliteGuideStore {
  const storeOptions = {
    searchWorkers: options.searchWorkers ?? 0,
    searchPriority: options.searchPriority,
    pageCacheKib: SERVING_PAGE_CACHE_KIB,
  };
  // The first open may create the file: serve migrates and imports into a new database.
  let current: SqliteGuideStore | undefined = createSqliteGuideStore(file, storeOptions);
  let identity = identityOf(file);
  let isClosed = false;
  // Each file opened is a new generation: another file may hold the same content version number,
  // and caches keyed by the version must not take its guides for the old file's.
  let generation = 0;

  const check = async (): Promise<void> => {
    const now = identityOf(file);
    if (now === identity && current) return;
    const old = current;
    current = undefined;
    identity = now;
    await old?.close();
    if (now === undefined) return;
    try {
      current = createSqliteGuideStore(file, { ...storeOptions, fileMustExist: true });
      generation += 1;
    } catch {
      // Not a database (yet): try again at the next check.
      identity = undefined;
    }
  };
  const timer = setInterval(() => {
    check().catch(() => undefined);
  }, options.checkIntervalMs ?? CHECK_INTERVAL_MS);
  timer.unref();

  const live = (): SqliteGuideStore | undefined => (isClosed ? undefined : current);
  const unavailable = (): Promise<never> => Promise.reject(new StoreUnavailableError('the SQLite database file is missing or unreadable'));
  const use = <K extends keyof GuideStore>(name: K) =>
    ((...args: unknown[]) => {
      const store = live();
      return store ? (store[name] as (...a: unknown[]) => Promise<unknown>)(...args) : unavailable();
    }) as GuideStore[K];

  return {
    migrate: use('migrate'),
    isEmpty: use('isEmpty'),
    contentVersion: async () => (await use('contentVersion')()) + generation * 2 ** 32,
    getProduct: use('getProduct'),
    getResources: use('getResources'),
    getPublishedGuide: use('getPublishedGuide'),
    listPublishedGuides: use('listPublishedGuides'),
    searchPublishedGuides: use('searchPublishedGuides'),
    // Only with search workers: the store of each file opened then renders search pages on them.
    ...(storeOptions.searchWorkers > 0
      ? {
          searchPages: {
            renderSearchPage: (options, rendering) => live()?.searchPages?.renderSearchPage(options, rendering) ?? unavailable(),
          } satisfies SearchPageRenderer,
        }
      : {}),
    listPublishedIndex: use('listPublishedIndex'),
    importContent: use('importContent'),
    // A folder is imported as it is read, never held whole (the file's store always streams).
    importStream: (content) => live()?.importStream?.(content) ?? unavailable(),
    guidePreparation: SQLITE_GUIDE_PREPARATION,
    existingGuides: use('existingGuides'),
    cursorKey: use('cursorKey'),
    ping: use('ping'),
    close: async () => {
      isClosed = true;
      clearInterval(timer);
      await current?.close();
      current = undefined;
    },
  };
}

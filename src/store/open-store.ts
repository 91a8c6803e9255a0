/** Picks the backend from DATABASE_URL: `sqlite:<file>` (embedded) or `postgres://…` (shared). */
import type { SearchPageRenderer } from '../representation/rendered-page.js';
import type { GuideStore } from './guide-store.js';
import { createSqliteGuideStore } from './sqlite/sqlite-guide-store.js';
import { createWatchedSqliteStore } from './sqlite/sqlite-watched-store.js';
import type { SearchPriority } from './sqlite/search/sqlite-search-pool.js';

export { SEARCH_PRIORITIES } from './sqlite/search/sqlite-search-pool.js';
export type { SearchPriority } from './sqlite/search/sqlite-search-pool.js';

export interface OpenStoreOptions {
  databaseUrl: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** SQLite: reopen when the file is replaced, answer unavailable while it is missing or unreadable (for serving). */
  watchFile?: boolean;
  /** SQLite: worker threads for searches (see sqlite-search-pool.ts); 0 or absent searches on the calling thread. */
  searchWorkers?: number;
  /** SQLite: how the search workers share the CPU with the event loop (see SearchPriority). */
  searchPriority?: SearchPriority;
}

/** A store, and what its backend offers beside the storage contract. */
export interface OpenedStore {
  store: GuideStore;
  /** SQLite with search workers: search pages rendered on them (absent: callers render the pages they search). */
  searchPages?: SearchPageRenderer;
}

export function sqliteFileOf(databaseUrl: string): string | undefined {
  return databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : undefined;
}

export async function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  const file = sqliteFileOf(options.databaseUrl);
  if (file !== undefined) {
    const sqliteOptions = { searchWorkers: options.searchWorkers ?? 0, searchPriority: options.searchPriority };
    const store = options.watchFile ? createWatchedSqliteStore(file, sqliteOptions) : createSqliteGuideStore(file, sqliteOptions);
    return { store, ...(store.searchPages ? { searchPages: store.searchPages } : {}) };
  }
  if (/^postgres(ql)?:\/\//.test(options.databaseUrl)) {
    // Loaded only when used, so SQLite deployments never load pg.
    const { createPostgresGuideStore } = await import('./postgres/postgres-guide-store.js');
    return { store: createPostgresGuideStore({ connectionString: options.databaseUrl, poolSize: options.poolSize ?? 10 }) };
  }
  throw new Error('DATABASE_URL must start with sqlite: or postgres://');
}

/** Picks the backend from DATABASE_URL: `sqlite:<file>` (embedded) or `postgres://…` (shared). */
import type { GuideStore } from './guide-store.js';
import { createSqliteGuideStore } from './sqlite/sqlite-guide-store.js';

export interface OpenStoreOptions {
  databaseUrl: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
}

export function sqliteFileOf(databaseUrl: string): string | undefined {
  return databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : undefined;
}

export async function openStore(options: OpenStoreOptions): Promise<GuideStore> {
  const file = sqliteFileOf(options.databaseUrl);
  if (file !== undefined) return createSqliteGuideStore(file);
  if (/^postgres(ql)?:\/\//.test(options.databaseUrl)) {
    // Loaded only when used, so SQLite deployments never load pg.
    const { createPostgresGuideStore } = await import('./postgres/postgres-guide-store.js');
    return createPostgresGuideStore({ connectionString: options.databaseUrl, poolSize: options.poolSize ?? 10 });
  }
  throw new Error('DATABASE_URL must start with sqlite: or postgres://');
}

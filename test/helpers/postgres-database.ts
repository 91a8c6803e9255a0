/**
 * Throwaway PostgreSQL databases for tests. Each call creates its own database on the server at
 * TEST_POSTGRES_URL (default: the development machine's postgres://postgres@127.0.0.1:5432/test)
 * and drop() removes it. When the server is unreachable the tests skip with a loud warning,
 * except under CI=true, where that is a failure.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function urlFor(database: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * True when PostgreSQL answers. Otherwise warns loudly and returns false, or throws under CI=true
 * (a missing service must fail CI, not skip). Call at the top of a test file: `describe.runIf(await …)`.
 */
export async function requirePostgres(what: string): Promise<boolean> {
  try {
    await admin((client) => client.query('SELECT 1'));
    return true;
  } catch (error) {
    const message = `PostgreSQL at ${POSTGRES_ADMIN_URL} is unreachable (${(error as Error).message}): ${what}`;
    if (process.env.CI === 'true') throw new Error(`${message} cannot run, and CI requires it.`, { cause: error });
    console.warn(
      `\n${'!'.repeat(78)}\n!! SKIPPED: ${message}.\n!! Start PostgreSQL or set TEST_POSTGRES_URL to run them.\n${'!'.repeat(78)}\n`,
    );
    return false;
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `guides_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  // The name is ours (letters, digits, underscores), so it can be written into the statement.
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    name,
    url: urlFor(name),
    drop: () =>
      admin(async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

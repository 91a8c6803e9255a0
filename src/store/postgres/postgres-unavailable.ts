/**
 * Why a PostgreSQL database cannot be used, said to the operator (CLI and logs; HTTP bodies keep
 * their fixed text): refused, authentication failed or no such database each name the server and
 * the database, never the password.
 */
import { StoreUnavailableError } from '../guide-store.js';

/** Where DATABASE_URL points, as the messages name it (pg's defaults: port 5432, database = user). */
export interface PostgresTarget {
  host: string;
  port: string;
  database: string;
  user: string;
}

export function postgresTarget(connectionString: string): PostgresTarget {
  try {
    const url = new URL(connectionString);
    const user = decodeURIComponent(url.username) || process.env.PGUSER || 'postgres';
    return {
      host: url.hostname || process.env.PGHOST || 'localhost',
      port: url.port || process.env.PGPORT || '5432',
      database: decodeURIComponent(url.pathname.slice(1)) || process.env.PGDATABASE || user,
      user,
    };
  } catch {
    return { host: '?', port: '?', database: '?', user: '?' };
  }
}

/** The error a store throws for `cause`, an error that isUnavailable() accepted. */
export function unavailableError(cause: unknown, target: PostgresTarget): StoreUnavailableError {
  const { code } = cause as { code?: unknown };
  const server = `PostgreSQL at ${target.host}:${target.port}`;
  const database = `database "${target.database}"`;
  let why: string;
  switch (code) {
    case 'ECONNREFUSED':
      why = `${server} refused the connection (is it running, and listening on that port?); wanted ${database}`;
      break;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      why = `the host of ${server} was not found (${code}); wanted ${database}`;
      break;
    case '28P01':
    case '28000':
      why = `${server} refused user "${target.user}" for ${database}: authentication failed (SQLSTATE ${code}); check the user and password in DATABASE_URL`;
      break;
    case '3D000':
      why = `${server} has no ${database} (SQLSTATE 3D000); create it (createdb) or fix DATABASE_URL`;
      break;
    default:
      why = `${server} cannot be reached for ${database} (${typeof code === 'string' ? code : (cause as Error).message})`;
  }
  return new StoreUnavailableError(why, { cause });
}

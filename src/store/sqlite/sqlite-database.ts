/**
 * Opens better-sqlite3 databases so that none of their native objects is ever garbage-collected.
 *
 * Why: from Node 24, node::ObjectWrap registers an environment cleanup hook per object and removes
 * it in its destructor, which asserts `(env) != nullptr` and aborts the whole process when V8
 * collects the object outside a JavaScript context. better-sqlite3 12.x (the last line that builds
 * on Node 20) objects are ObjectWraps, so a dropped Statement or Database crashes a server on Node
 * 24 at its next GC under load (test/store/sqlite/sqlite-native-objects.test.ts). Until the driver
 * is fixed upstream, every Database and every Statement we create stays reachable for the life of
 * the process. Nothing prepares statements per request, so what this keeps is bounded by the
 * databases opened and the statements they prepare. ESLint allows no other `new Database`.
 * better-sqlite3 13 (Node-API) does not abort, but needs Node 22: its binary crashes on Node 20.
 */
import Database from 'better-sqlite3';

const keptForLifeOfProcess = new Set<object>();

export function openSqliteDatabase(file: string, options: Database.Options = {}): Database.Database {
  const db = new Database(file, options);
  keptForLifeOfProcess.add(db);
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    keptForLifeOfProcess.add(statement);
    return statement;
  }) as typeof db.prepare;
  // pragma() prepares a statement natively, past the method above, and drops it at once.
  db.pragma = (() => {
    throw new Error('db.pragma() drops a native statement (fatal on Node 24): use db.exec() or db.prepare()');
  }) as typeof db.pragma;
  // transaction() prepares BEGIN/COMMIT natively too, but caches them on the database, which is kept.
  return db;
}

/** Whether an error means the database cannot be read right now (the API answers 503), rather than a bug. */
export function isUnavailableError(error: unknown, db: Database.Database): boolean {
  const code = (error as { code?: string }).code ?? '';
  return /^SQLITE_(CANTOPEN|IOERR|CORRUPT|NOTADB|BUSY|LOCKED|READONLY|FULL)/.test(code) || !db.open;
}

/**
 * Runs reads in one read transaction, so that an import committed meanwhile by another process is
 * seen whole or not at all (inside a transaction already, reads just run).
 */
export function snapshotReader(db: Database.Database): <T>(read: () => T) => T {
  const inSnapshot = db.transaction((read: () => unknown) => read());
  return <T>(read: () => T): T => (db.inTransaction ? read() : (inSnapshot.deferred(read) as T));
}

/**
 * A search worker thread (started by sqlite-search-pool.ts): its own read-only connection to the
 * database and its own copy of the search index. It answers searches one at a time, in the order
 * they come, each in one read transaction, and exits when asked to close.
 */
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { isUnavailableError, openSqliteDatabase, snapshotReader } from './sqlite-database.js';
import { createSqliteSearch, searchPage } from './sqlite-search.js';
import type { SqliteSearch } from './sqlite-search.js';
import type { SearchWorkerData, WorkerReply, WorkerRequest } from './sqlite-search-pool.js';
import { renderSearchPage } from '../../http/guide-list-body.js';
import { ownBytes } from '../../http/representation.js';

const port = parentPort!;
const { file, priority } = workerData as SearchWorkerData;

/** The nice value of `low`, and of `idle` where SCHED_IDLE cannot be set. */
const LOW_NICE = 10;

// Searches yield the CPU to the event loop: when both want it (a flood of searches), guide reads,
// lists and the rest go first (see SearchPriority). Linux schedules threads on their own: this
// thread's id is its own entry under /proc. Node has no call for a scheduling policy, so SCHED_IDLE
// is set by util-linux's `chrt` (once, at start); setpriority() on a thread id sets its nice value.
// Elsewhere, or when not allowed, searches run at the server's priority.
try {
  const threadId = priority === 'normal' ? undefined : /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1];
  if (threadId) {
    let isIdle = false;
    if (priority === 'idle') {
      try {
        execFileSync('chrt', ['--idle', '--pid', '0', threadId], { stdio: 'ignore', timeout: 5000 });
        isIdle = true;
      } catch {
        // No chrt (a minimal image): nice +10 instead.
      }
    }
    if (!isIdle) setPriority(Number(threadId), LOW_NICE);
  }
} catch {
  // Not Linux.
}

let db: Database.Database | undefined;
let search: SqliteSearch | undefined;
let read: (<T>(read: () => T) => T) | undefined;
let openError: unknown;
try {
  db = openSqliteDatabase(file, { readonly: true, fileMustExist: true });
  // 2 MB of SQLite's page cache (its own default), not better-sqlite3's 16 MB: posting lists are
  // kept decoded in the search's own caches, and a page's guide rows are read at random from a
  // file far larger than any cache (they come from the OS's page cache either way). Measured
  // 2026-11-26, two-term searches in process on 10k guides, three alternating runs: mean 1.42–1.63 ms
  // a search with 2 MB, 1.53–1.70 ms with 16 MB.
  db.exec('PRAGMA busy_timeout = 5000; PRAGMA cache_size = -2048');
  search = createSqliteSearch(db);
  read = snapshotReader(db);
} catch (error) {
  // Every search is then answered "unavailable"; the store that owns this worker reopens the file.
  openError = error;
}

function failure(error: unknown): WorkerReply['error'] {
  const unavailable = db === undefined || isUnavailableError(error, db);
  return { message: error instanceof Error ? error.message : String(error), unavailable };
}

port.on('message', (message: WorkerRequest) => {
  if (message.type === 'close') {
    if (db?.open) db.close();
    port.close();
    return;
  }
  if (message.type === 'warm') {
    try {
      if (search && read) read(() => search!.warm());
    } catch {
      // The next search meets the same error and reports it.
    }
    return;
  }
  let reply: WorkerReply;
  try {
    if (!search || !read) throw openError;
    const page = read(() => searchPage(search!, message.options));
    if (message.rendering) {
      const { body, encoded, ...rest } = renderSearchPage(page, message.options.query.text, message.rendering);
      reply = { id: message.id, rendered: { ...rest, body: ownBytes(body), ...(encoded ? { encoded: { coding: encoded.coding, body: ownBytes(encoded.body) } } : {}) } };
    } else {
      reply = { id: message.id, page };
    }
  } catch (error) {
    reply = { id: message.id, error: failure(error) };
  }
  // The body's bytes are copied into the event loop's thread (structured clone), not transferred:
  // memory that this thread allocated and the event loop freed (after its GC) stayed resident in
  // this thread's malloc arena. Measured 2026-11-26 on 10k guides, random guide reads then each
  // search kind at 16 connections for 10 s (two runs against one, alternating): peak RSS 239–241 MB
  // copied against 278 MB transferred, searches as fast (a 13 KB copy is about a microsecond).
  port.postMessage(reply);
});


/**
 * A search worker thread (started by sqlite-search-pool.ts): its own read-only connection to the
 * database and its own copy of the search index. It answers searches one at a time, in the order
 * they come, each in one read transaction, and exits when asked to close. Searches that wait
 * together are answered together, in one message (see BATCH_MS).
 */
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { isUnavailableError, openSqliteDatabase, snapshotReader } from '../sqlite-database.js';
import { createSqliteSearch, searchCardPage, searchPage } from './sqlite-search.js';
import type { SqliteSearch } from './sqlite-search.js';
import { SEARCH_LOW_NICE } from './sqlite-search-pool.js';
import type { SearchWorkerData, WorkerMessage, WorkerReply, WorkerRequest } from './sqlite-search-pool.js';
import { loadRepresentationHash, ownBytes } from '../../../representation/representation.js';
import { renderSearchCardPage } from '../../../representation/search-cards-body.js';

const port = parentPort!;
const { file, priority } = workerData as SearchWorkerData;

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
    if (!isIdle) setPriority(Number(threadId), SEARCH_LOW_NICE);
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
  // SQLite's own default page cache, not better-sqlite3's larger one: posting lists are kept decoded
  // in the search's own caches, and guide rows are read at random from a file far larger than any
  // cache (docs/performance.md#search-workers).
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

type SearchRequest = Extract<WorkerRequest, { type: 'search' }>;

/**
 * How long the searches answered in one message may take together: searches that waited are
 * answered in a row and sent in one message, since each message wakes the event loop, which on one
 * core takes the CPU and its caches from this thread (docs/performance.md#search-workers).
 */
const BATCH_MS = 5;

const queued: SearchRequest[] = [];

function answer(message: SearchRequest): WorkerReply {
  try {
    if (!search || !read) throw openError;
    if (!message.rendering) return { id: message.id, page: read(() => searchPage(search!, message.options)) };
    // Rendered from the results' cards: no summary fields parsed or serialized (search-cards-body.ts).
    const page = read(() => searchCardPage(search!, message.options));
    const { body, encoded, ...rest } = renderSearchCardPage(page, message.options.query.text, message.rendering);
    return {
      id: message.id,
      rendered: {
        ...rest,
        body: ownBytes(body),
        ...(encoded ? { encoded: { coding: encoded.coding, body: ownBytes(encoded.body) } } : {}),
      },
    };
  } catch (error) {
    return { id: message.id, error: failure(error) };
  }
}

/** Answers the searches waiting, in order, for up to BATCH_MS (`limitMs`), in one message. */
function answerQueued(limitMs = BATCH_MS): void {
  // Nothing left: a close answered them (and closed the port) before this turn came.
  if (queued.length === 0) return;
  const started = performance.now();
  const replies: WorkerReply[] = [];
  do replies.push(answer(queued.shift()!));
  while (queued.length > 0 && performance.now() - started < limitMs);
  // The bodies' bytes are copied (structured clone), not transferred: memory this thread allocated
  // and the event loop freed stayed resident in this thread's malloc arena
  // (docs/performance.md#search-workers).
  port.postMessage(replies);
  // Searches that arrive meanwhile are queued (the message phase) before the next batch starts.
  if (queued.length > 0) setImmediate(answerQueued);
}

function receive(message: WorkerRequest): void {
  if (message.type === 'close') {
    // Searches sent before the close are answered first (all of them: no time limit).
    answerQueued(Number.POSITIVE_INFINITY);
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
  // Every message that has arrived is taken before the first search of a batch runs.
  queued.push(message);
  if (queued.length === 1) setImmediate(answerQueued);
}

// Pages are hashed for their ETags: messages wait in the port until the hash is loaded. Should it
// fail to load, the rejection ends this thread with an error, which the pool reports for the
// searches it sent.
void loadRepresentationHash().then(() => {
  port.on('message', receive);
  // Ready: the database is open and searches are taken. The index loads at the first warm or
  // search (a server warms at once), which searches sent meanwhile wait for.
  port.postMessage('ready' satisfies WorkerMessage);
});

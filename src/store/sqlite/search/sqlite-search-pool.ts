/**
 * Searches on worker threads. A search on SQLite is CPU work (decoding and scoring posting lists,
 * building snippets: milliseconds for common terms on a large corpus), and better-sqlite3 runs it
 * synchronously, so on the event loop every search would hold up every other request. Here each
 * worker has its own read-only connection and index (sqlite-search-worker.ts); a search goes to
 * the worker with the fewest searches waiting, and the event loop only sends the query and
 * receives the page. How many run and wait is the search budget's business (search-budget.ts).
 *
 * A worker is ready once it has opened the database and takes searches; a search sent before
 * that waits for it (messages wait in the worker's port), up to START_WAIT_MS, and /readyz stays
 * 503 until every worker is ready (the store's ping). A worker that dies fails its searches with
 * StoreUnavailableError (503) and is replaced at the next search. An idle worker does not keep the
 * process alive; close() lets them finish and exit.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../../lib/start-worker.js';
import type { SearchPosition } from '../../../guides/cursor.js';
import type { RenderedSearchPage, SearchRendering } from '../../../representation/rendered-page.js';
import type { Page } from '../../guide-store.js';
import { StoreUnavailableError } from '../../guide-store.js';
import type { SearchPageOptions } from './sqlite-search.js';

/**
 * How the workers' threads share the CPU with the event loop (Linux; elsewhere they run at the
 * server's priority):
 * - `idle` (the default): the SCHED_IDLE policy. A search thread runs only on a CPU that nothing
 *   else of normal priority wants, and gives it up the moment the event loop (or any other normal
 *   thread) wakes. Falls back to `low` when it cannot be set (no `chrt` command).
 * - `low`: nice +10. The event loop goes first, but a running search may keep the CPU for the rest of
 *   the scheduler's time slice, and under sustained contention still gets a share of it.
 * - `normal`: the server's priority.
 */
export type SearchPriority = 'idle' | 'low' | 'normal';
export const SEARCH_PRIORITIES: readonly SearchPriority[] = ['idle', 'low', 'normal'];

/** The nice value of `low`, and of `idle` where SCHED_IDLE cannot be set. */
export const SEARCH_LOW_NICE = 10;

export interface SearchWorkerData {
  file: string;
  priority: SearchPriority;
}

/**
 * A worker's young generation grows to V8's default within a few hundred searches, far more than the
 * heap that survives them; this cap costs no measurable search time, a smaller one does
 * (docs/performance.md#search-workers).
 */
const WORKER_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 8 };

export type WorkerRequest =
  { type: 'search'; id: number; options: SearchPageOptions; rendering?: SearchRendering } | { type: 'warm' } | { type: 'close' };

/** A rendered page as it crosses threads: its byte arrays arrive as copies (see sqlite-search-worker.ts). */
export interface RenderedPageMessage extends Omit<RenderedSearchPage, 'body' | 'encoded'> {
  body: Uint8Array;
  encoded?: { coding: 'br' | 'gzip'; body: Uint8Array };
}

/** What a worker posts: the replies of a batch of searches, or once, at start, that it is ready. */
export type WorkerMessage = WorkerReply[] | 'ready';

export interface WorkerReply {
  id: number;
  page?: Page<SearchPosition>;
  rendered?: RenderedPageMessage;
  error?: { message: string; unavailable: boolean };
}

/** A Buffer over a received array's memory (no further copy). */
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export interface SearchPool {
  search(options: SearchPageOptions): Promise<Page<SearchPosition>>;
  /**
   * The same search, answered as its response body (representation/search-cards-body.ts): the worker serializes,
   * hashes and compresses the page, and hands over the bytes.
   */
  render(options: SearchPageOptions, rendering: SearchRendering): Promise<RenderedSearchPage>;
  /** Starts any worker not running, and asks every worker to load the current index now (at start, after an import), not at its next search. */
  warm(): void;
  /** Whether every worker is up (started, its database open, taking searches); starts any worker not running. */
  isReady(): boolean;
  close(): Promise<void>;
}

interface Pending {
  resolve(reply: WorkerReply): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  exited: Promise<void>;
  isReady: boolean;
}

/** How long close() waits for a worker to exit by itself before terminating it. */
const CLOSE_GRACE_MS = 2000;
/** How long a search waits for a worker that has not started yet (on a busy machine that takes seconds). */
const START_WAIT_MS = 10_000;

export function createSearchPool(file: string, size: number, priority: SearchPriority = 'idle'): SearchPool {
  const slots: (Slot | undefined)[] = Array.from({ length: size }, () => undefined);
  let nextId = 0;
  let isClosed = false;

  function spawn(index: number): Slot {
    const worker = startWorker(
      import.meta.url,
      'sqlite-search-worker',
      { file, priority } satisfies SearchWorkerData,
      WORKER_RESOURCE_LIMITS,
    );
    worker.unref();
    const pending = new Map<number, Pending>();
    const failAll = (why: string): void => {
      for (const { reject } of pending.values()) reject(new StoreUnavailableError(why));
      pending.clear();
      if (slots[index] === slot) slots[index] = undefined;
    };
    const slot: Slot = {
      worker,
      pending,
      exited: new Promise((resolve) =>
        worker.once('exit', () => {
          failAll('the search worker stopped');
          resolve();
        }),
      ),
      isReady: false,
    };
    // A message holds the replies of every search the worker answered in a row (its batch).
    worker.on('message', (replies: WorkerMessage) => {
      if (replies === 'ready') {
        slot.isReady = true;
        return;
      }
      for (const reply of replies) {
        const waiting = pending.get(reply.id);
        if (!waiting) continue;
        pending.delete(reply.id);
        if (reply.page || reply.rendered) waiting.resolve(reply);
        else if (reply.error?.unavailable)
          waiting.reject(new StoreUnavailableError(`the SQLite database cannot be read: ${reply.error.message}`));
        else waiting.reject(new Error(reply.error?.message ?? 'the search worker gave no answer'));
      }
      if (pending.size === 0) worker.unref();
    });
    worker.on('error', (error) => failAll(`the search worker failed: ${error.message}`));
    slots[index] = slot;
    return slot;
  }

  // No worker starts with the pool: the first search or warm() starts them. A server warms them
  // once it is ready (its first content-version check), so that loading a large index does not
  // compete with its start.

  function ask(options: SearchPageOptions, rendering?: SearchRendering): Promise<WorkerReply> {
    if (isClosed) return Promise.reject(new StoreUnavailableError('the store is closed'));
    let best = 0;
    for (let i = 1; i < size; i += 1) if ((slots[i]?.pending.size ?? 0) < (slots[best]?.pending.size ?? 0)) best = i;
    const slot = slots[best] ?? spawn(best);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      // A search waited for keeps the process alive (a script may have nothing else to).
      if (slot.pending.size === 0) slot.worker.ref();
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ type: 'search', id, options, ...(rendering ? { rendering } : {}) } satisfies WorkerRequest);
      if (slot.isReady) return;
      setTimeout(() => {
        if (!slot.pending.delete(id)) return;
        reject(new StoreUnavailableError('the search worker did not start in time'));
      }, START_WAIT_MS).unref();
    });
  }

  return {
    search: async (options) => (await ask(options)).page!,
    async render(options, rendering) {
      const { body, encoded, ...rest } = (await ask(options, rendering)).rendered!;
      return { ...rest, body: asBuffer(body), ...(encoded ? { encoded: { coding: encoded.coding, body: asBuffer(encoded.body) } } : {}) };
    },
    warm() {
      if (isClosed) return;
      for (let i = 0; i < size; i += 1) (slots[i] ?? spawn(i)).worker.postMessage({ type: 'warm' } satisfies WorkerRequest);
    },
    isReady() {
      if (isClosed) return false;
      for (let i = 0; i < size; i += 1) slots[i] ??= spawn(i);
      return slots.every((slot) => slot?.isReady);
    },
    async close() {
      if (isClosed) return;
      isClosed = true;
      await Promise.all(
        slots.map(async (slot) => {
          if (!slot) return;
          slot.worker.postMessage({ type: 'close' } satisfies WorkerRequest);
          const timer = setTimeout(() => void slot.worker.terminate(), CLOSE_GRACE_MS);
          await slot.exited;
          clearTimeout(timer);
        }),
      );
    },
  };
}

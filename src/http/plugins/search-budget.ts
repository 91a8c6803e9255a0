/**
 * Search budget. A search (GET /api/v1/guides with a q, or with a search cursor) is the one request
 * a client can make expensive and vary at will, defeating every cache. Beyond the budget a search
 * is refused at once, before any work, with 503 service-unavailable and Retry-After, so that a
 * flood of distinct searches cannot starve guide reads, lists and the rest:
 *
 * - concurrency: at most SEARCH_CONCURRENCY searches in flight (this keeps connections of a
 *   PostgreSQL pool, or SQLite's search worker threads, free for everything else);
 * - event-loop lag: a search still costs the event loop its parsing and its (large) answer, and
 *   with SEARCH_WORKERS=0 SQLite runs whole searches on the loop. While the loop runs late (a
 *   timer every 10 ms fires more than SEARCH_MAX_LAG_MS late), searches are refused and
 *   everything else is served. One client searching back to back never trips it: the loop runs
 *   its timers between requests.
 */
import { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { AppError } from '../problems.js';
import { globalPlugin } from './global-plugin.js';

const SEARCH_ROUTE = '/api/v1/guides';
const LAG_SAMPLE_MS = 10;
/** After a sustained flood, searches stay refused this long once the loop runs on time again. */
const LAG_HOLD_MS = 500;
const RETRY_AFTER_SECONDS = 1;
/** How far past SEARCH_MAX_LAG_MS the loop must be, in one batch of requests, to refuse at once. */
const BURST_FACTOR = 4;

export interface SearchBudgetStats {
  /** Searches refused because the budget was spent. */
  shed: number;
  /** Searches running now. */
  inFlight: number;
}

/** Whether a list request is a search: a non-blank q, or a cursor that continues a search (read, not verified). */
export function isSearchRequest(query: unknown): boolean {
  const { q, cursor } = (query ?? {}) as { q?: unknown; cursor?: unknown };
  if (typeof q === 'string' && q.trim() !== '') return true;
  if (typeof cursor !== 'string') return Array.isArray(q) || Array.isArray(cursor);
  // A cursor's body is base64url JSON: [version, 'l' | 's', …]. A forged one fails verification later anyway.
  const body = cursor.slice(0, Math.max(0, cursor.indexOf('.')));
  try {
    const fields = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    return !Array.isArray(fields) || fields[1] !== 'l';
  } catch {
    return true;
  }
}

export function registerSearchBudget(app: FastifyInstance, config: Config): SearchBudgetStats {
  const stats: SearchBudgetStats = { shed: 0, inFlight: 0 };
  if (config.searchConcurrency === 0) return stats;
  const counted = new WeakSet<FastifyRequest>();
  const overBudget = new AppError('service-unavailable', 'Too many searches are running right now. Retry after the number of seconds in Retry-After; reading guides is not affected.',
    { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });

  // Event-loop lag, from a timer. While the loop works through a batch of requests the timer
  // cannot fire, so the time since it last did is how far behind the loop is right now: a search
  // arriving when that is BURST_FACTOR times over the limit is refused at once. Two late firings
  // in a row (a sustained flood) refuse from the limit itself, for LAG_HOLD_MS after the loop
  // catches up.
  let lastTickAt = performance.now();
  let lateUntil = 0;
  let lateInARow = 0;
  let timer: NodeJS.Timeout | undefined;
  const sample = (expectedAt: number): void => {
    const now = performance.now();
    lastTickAt = now;
    lateInARow = now - expectedAt > config.searchMaxLagMs ? lateInARow + 1 : 0;
    if (lateInARow >= 2) lateUntil = now + LAG_HOLD_MS;
    timer = setTimeout(sample, LAG_SAMPLE_MS, now + LAG_SAMPLE_MS);
    timer.unref();
  };

  // Only requests from the network queue on the loop; app.inject (tests, internal calls) runs in
  // its caller's turn, where timers cannot fire, and would read as an ever-growing lag.
  const isLoopLate = (request: FastifyRequest): boolean => {
    if (config.searchMaxLagMs === 0 || !(request.raw.socket instanceof Socket)) return false;
    const now = performance.now();
    // A batch running several times over the limit is a burst; once over it may be a scheduling hiccup.
    return now < lateUntil || now - lastTickAt - LAG_SAMPLE_MS > BURST_FACTOR * config.searchMaxLagMs;
  };

  const release = (request: FastifyRequest): void => {
    if (counted.delete(request)) stats.inFlight -= 1;
  };

  app.register(globalPlugin(async (instance) => {
    instance.addHook('onReady', async () => sample(performance.now()));
    instance.addHook('onClose', async () => clearTimeout(timer));
    instance.addHook('onRequest', async (request) => {
      if (request.routeOptions.url !== SEARCH_ROUTE || !isSearchRequest(request.query)) return;
      if (stats.inFlight >= config.searchConcurrency || isLoopLate(request)) {
        stats.shed += 1;
        throw overBudget;
      }
      stats.inFlight += 1;
      counted.add(request);
    });
    instance.addHook('onResponse', async (request) => release(request));
    instance.addHook('onRequestAbort', async (request) => release(request));
  }));
  return stats;
}

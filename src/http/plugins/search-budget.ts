/**
 * Search budget. A search (GET /api/v1/guides with a q, or with a search cursor) is the one request
 * a client can make expensive and vary at will, defeating every cache. Two limits keep a flood of
 * searches from starving guide reads, lists and the rest; neither looks at event-loop lag, which
 * any other process on the machine moves:
 *
 * - per client: at most SEARCH_CONCURRENCY_PER_CLIENT searches in flight (running or waiting) from
 *   one client, counted under its rate-limit key (the IP, IPv6 by /64). One more is refused at once
 *   with 429 rate-limited, Retry-After and a RateLimit item of its own, as Stripe's concurrent
 *   request limiter does: a client that waits for its answers never meets it; one that opens many
 *   connections is refused, not the clients next to it.
 * - for the server: at most SEARCH_CONCURRENCY searches run at once (this keeps connections of a
 *   PostgreSQL pool free for everything else, and gives SQLite's search workers a few to batch);
 *   the others wait in a FIFO queue of at most SEARCH_QUEUE_LENGTH (p-limit). Only a search that
 *   finds the queue full is refused, with 503 service-unavailable and Retry-After.
 *
 * Both are Fastify's own hooks and wrappers: the per-client count in the list route's onRequest
 * (released at onResponse or onRequestAbort), the queue around the store's search calls and the
 * search page renderer's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import pLimit from 'p-limit';
import type { Config } from '../../config.js';
import type { RouteContext } from '../app-types.js';
import { AppError } from '../problems.js';
import fastifyPlugin from 'fastify-plugin';
import { hooksOf } from './hooks-of.js';
import type { MetricsTable } from './metrics.js';
import { clientKey } from './rate-limit-counters.js';

const SEARCH_ROUTE = '/api/v1/guides';
/** The RateLimit item of the per-client limit (draft-ietf-httpapi-ratelimit-headers: quota unit concurrent-requests). */
const SEARCH_POLICY_NAME = 'searches-in-flight';
/** A search takes milliseconds: a slot is free again well within a second. */
const RETRY_AFTER_SECONDS = 1;

/** The route context's searching parts: the store, and the search page renderer its backend offers, if any. */
export type Searches = Pick<RouteContext, 'store' | 'searchPages'>;

export interface SearchBudget {
  /** The same with every search call behind the queue (the same objects when the budget is off). */
  queueSearches(searches: Searches): Searches;
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

/** A header list (RateLimit, RateLimit-Policy) with one more item after what the rate limiter set. */
function withItem(reply: FastifyReply, name: string, item: string): string {
  const current = reply.getHeader(name);
  return typeof current === 'string' && current !== '' ? `${current}, ${item}` : item;
}

export function registerSearchBudget(app: FastifyInstance, config: Config, metrics: MetricsTable): SearchBudget {
  const limit = pLimit(Math.max(1, config.searchConcurrency));
  const stats = { shed: 0, clientLimited: 0 };
  metrics.add(
    {
      name: 'guides_search_shed_total',
      type: 'counter',
      read: () => stats.shed,
      help: 'Searches refused with 503 because the search queue was full (SEARCH_QUEUE_LENGTH).',
    },
    {
      name: 'guides_search_client_limited_total',
      type: 'counter',
      read: () => stats.clientLimited,
      help: 'Searches refused with 429 because their client had SEARCH_CONCURRENCY_PER_CLIENT searches in flight.',
    },
    {
      name: 'guides_search_queued',
      type: 'gauge',
      read: () => limit.pendingCount,
      help: 'Searches waiting for one of the SEARCH_CONCURRENCY running slots.',
    },
  );
  if (config.searchConcurrency === 0) return { queueSearches: (searches) => searches };

  const queueFull = new AppError(
    'service-unavailable',
    'Too many searches are waiting right now. Retry after the number of seconds in Retry-After; reading guides is not affected.',
    { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } },
  );
  const queued = <T>(search: () => Promise<T>): Promise<T> => {
    if (limit.activeCount >= config.searchConcurrency && limit.pendingCount >= config.searchQueueLength) {
      stats.shed += 1;
      return Promise.reject(queueFull);
    }
    return limit(search);
  };
  const queueSearches = ({ store, searchPages }: Searches): Searches => ({
    store: { ...store, searchPublishedGuides: (options) => queued(() => store.searchPublishedGuides(options)) },
    ...(searchPages
      ? { searchPages: { renderSearchPage: (options, rendering) => queued(() => searchPages.renderSearchPage(options, rendering)) } }
      : {}),
  });

  const perClient = config.searchConcurrencyPerClient;
  if (perClient === 0) return { queueSearches };
  const inFlight = new Map<string, number>();
  const counted = new WeakMap<FastifyRequest, string>();
  const policy = `"${SEARCH_POLICY_NAME}";q=${perClient};qu="concurrent-requests"`;

  const release = (request: FastifyRequest): void => {
    const key = counted.get(request);
    if (key === undefined) return;
    counted.delete(request);
    const left = (inFlight.get(key) ?? 1) - 1;
    if (left === 0) inFlight.delete(key);
    else inFlight.set(key, left);
  };

  // On the list route only (where searches are), after every application-wide onRequest hook (the
  // rate limiter's RateLimit headers are set), and callback-style: no other request pays for it.
  const onRequest = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    if (!isSearchRequest(request.query)) {
      done();
      return;
    }
    const key = clientKey(request.ip);
    const running = inFlight.get(key) ?? 0;
    if (running >= perClient) {
      stats.clientLimited += 1;
      done(
        new AppError(
          'rate-limited',
          `This client has ${perClient} searches in flight, the most allowed at once. Wait for their answers, or retry after the number of seconds in Retry-After.`,
          {
            headers: {
              'retry-after': String(RETRY_AFTER_SECONDS),
              'ratelimit-policy': withItem(reply, 'ratelimit-policy', policy),
              ratelimit: withItem(reply, 'ratelimit', `"${SEARCH_POLICY_NAME}";r=0;t=${RETRY_AFTER_SECONDS}`),
            },
          },
        ),
      );
      return;
    }
    inFlight.set(key, running + 1);
    counted.set(request, key);
    done();
  };
  const onResponse = (request: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    release(request);
    done();
  };
  const onRequestAbort = (request: FastifyRequest, done: () => void): void => {
    release(request);
    done();
  };

  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onRoute', (route) => {
        if (route.url !== SEARCH_ROUTE) return;
        route.onRequest = [...hooksOf(route.onRequest), onRequest];
        route.onResponse = [...hooksOf(route.onResponse), onResponse];
        route.onRequestAbort = [...hooksOf(route.onRequestAbort), onRequestAbort];
      });
    }),
  );
  return { queueSearches };
}

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
 *
 * The refusal itself must be cheap. Clients that ignore Retry-After send the next search as soon
 * as the 503 arrives, so a flood is as fast as its refusals: through Fastify (routing, hooks, the
 * error handler: ~50 µs each) 200 such clients kept the event loop busy with refusals alone, and
 * guide reads queued behind them (p99 22× idle). So once the first refusal has gone through
 * Fastify, later ones are answered in the HTTP server's request listener, before Fastify, with
 * that first refusal's headers (less the per-request and per-client ones: request id, RateLimit)
 * and the same body. They are counted here and in /metrics, not logged one by one (a log line per
 * refused request would be a second flood), and do not count against the client's rate limit.
 *
 * Even so, 200 such connections kept the loop saturated in bursts, each guide read waiting behind
 * a batch of refusals (~20 µs each, Node's own cost of a request). So a connection refused a
 * search again within the Retry-After it was given (it ignored it) is not read for that long: the
 * answer goes out at once, and whatever that client sends next on that connection waits (one to
 * two Retry-Afters, at random, so that connections held together do not return together), at no
 * cost to the server. A client that honours Retry-After never notices (it may go on reading
 * guides on the same connection); one that floods on keep-alive connections gets about one
 * request a second through each. Other connections are not affected. This stops reading through
 * Node's own pipelining back-pressure (socket._paused and its parser, which Node 20 to 24 have);
 * where those are missing, connections are not held and only the refusals' low cost remains.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { AppError, problemBody } from '../problems.js';
import { requestIdFor } from '../request-id.js';
import { globalPlugin, hooksOf, inFrontOfFastify } from './global-plugin.js';

const SEARCH_ROUTE = '/api/v1/guides';
const REFUSAL_DETAIL = 'Too many searches are running right now. Retry after the number of seconds in Retry-After; reading guides is not affected.';
/** Headers of the first refusal that belong to that request, that client or that body's encoding. */
const NOT_IN_TEMPLATE = new Set(['x-request-id', 'ratelimit', 'ratelimit-policy', 'content-length', 'content-encoding', 'vary', 'date', 'connection', 'keep-alive']);
const LAG_SAMPLE_MS = 10;
/** After a sustained flood, searches stay refused this long once the loop runs on time again. */
const LAG_HOLD_MS = 500;
const RETRY_AFTER_SECONDS = 1;
/** Refusals on one connection closer than this: the client ignored Retry-After. */
const RETRY_AFTER_MS = RETRY_AFTER_SECONDS * 1000;
/** How far past SEARCH_MAX_LAG_MS the loop must be, in one batch of requests, to refuse at once. */
const BURST_FACTOR = 4;

export interface SearchBudgetStats {
  /** Searches refused because the budget was spent. */
  shed: number;
  /** Searches running now. */
  inFlight: number;
}

/** Stops reading a connection for `ms` (what it has been sent is still written), as Node does for pipelined requests. */
function holdConnection(socket: Socket, ms: number): void {
  const internal = socket as Socket & { _paused?: boolean; parser?: { pause(): void; resume(): void } | null };
  if (internal._paused || typeof internal.parser?.pause !== 'function') return;
  internal._paused = true;
  internal.parser.pause();
  socket.pause();
  setTimeout(() => {
    if (socket.destroyed) return;
    internal._paused = false;
    internal.parser?.resume();
    socket.resume();
  }, ms).unref();
}

/** The parameters isSearchRequest reads, from a request target (repeated ones as arrays, as Fastify parses them). */
function queryOf(url: string): { q?: string | string[]; cursor?: string | string[] } {
  const params = new URLSearchParams(url.slice(url.indexOf('?') + 1));
  const one = (name: string): string | string[] | undefined => {
    const values = params.getAll(name);
    return values.length > 1 ? values : values[0];
  };
  return { q: one('q'), cursor: one('cursor') };
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
  const overBudget = new AppError('service-unavailable', REFUSAL_DETAIL, { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });

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
  const isLoopLate = (request: IncomingMessage): boolean => {
    if (config.searchMaxLagMs === 0 || !(request.socket instanceof Socket)) return false;
    const now = performance.now();
    // A batch running several times over the limit is a burst; once over it may be a scheduling hiccup.
    return now < lateUntil || now - lastTickAt - LAG_SAMPLE_MS > BURST_FACTOR * config.searchMaxLagMs;
  };

  const isOverBudget = (request: IncomingMessage): boolean => stats.inFlight >= config.searchConcurrency || isLoopLate(request);

  // Early refusals (see the top of this file): the first refusal made by Fastify is the template.
  let firstRefused: FastifyRequest | undefined;
  let template: OutgoingHttpHeaders | undefined;
  const refusalBody = JSON.stringify(problemBody(config.publicBaseUrl, 'service-unavailable', REFUSAL_DETAIL));
  const refusalLength = String(Buffer.byteLength(refusalBody));
  const lastRefusalAt = new WeakMap<Socket, number>();
  const refuseEarly = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (!template || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
    const url = request.url ?? '';
    if (!url.startsWith(`${SEARCH_ROUTE}?`) || !isOverBudget(request) || !isSearchRequest(queryOf(url))) return false;
    stats.shed += 1;
    response.writeHead(503, { ...template, 'x-request-id': requestIdFor(request.headers), 'content-length': refusalLength });
    response.end(refusalBody);
    const now = performance.now();
    const last = lastRefusalAt.get(request.socket);
    lastRefusalAt.set(request.socket, now);
    // Held for the Retry-After and up to as long again, at random: connections refused together
    // must not all come back in the same instant.
    if (last !== undefined && now - last < RETRY_AFTER_MS) holdConnection(request.socket, RETRY_AFTER_MS * (1 + Math.random()));
    return true;
  };
  inFrontOfFastify(app, (request, response, next) => {
    if (!refuseEarly(request, response)) next(request, response);
  });

  const release = (request: FastifyRequest): void => {
    if (counted.delete(request)) stats.inFlight -= 1;
  };

  app.register(globalPlugin(async (instance) => {
    instance.addHook('onReady', async () => sample(performance.now()));
    instance.addHook('onClose', async () => clearTimeout(timer));
    // On the list route only (where searches are), after every application-wide onRequest hook,
    // and callback-style: no other request pays for the budget.
    const onRequest = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
      if (!isSearchRequest(request.query)) {
        done();
        return;
      }
      if (isOverBudget(request.raw)) {
        stats.shed += 1;
        if (!template && !firstRefused && request.raw.socket instanceof Socket) firstRefused = request;
        done(overBudget);
        return;
      }
      stats.inFlight += 1;
      counted.add(request);
      done();
    };
    const onResponse = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      release(request);
      if (request === firstRefused && !template) {
        template = Object.fromEntries(Object.entries(reply.getHeaders()).filter(([name]) => !NOT_IN_TEMPLATE.has(name)));
      }
      done();
    };
    const onRequestAbort = (request: FastifyRequest, done: () => void): void => {
      release(request);
      done();
    };
    instance.addHook('onRoute', (route) => {
      if (route.url !== SEARCH_ROUTE) return;
      route.onRequest = [...hooksOf(route.onRequest), onRequest];
      route.onResponse = [...hooksOf(route.onResponse), onResponse];
      route.onRequestAbort = [...hooksOf(route.onRequestAbort), onRequestAbort];
    });
  }));
  return stats;
}

/**
 * Early answers: a representation-cache hit is sent from the HTTP server's request listener,
 * before Fastify, exactly as Fastify sent it the first time.
 *
 * Why: a cache hit is most of the traffic (a hot guide, the first list page, the product, a 304
 * revalidation) and costs almost nothing of ours, but Fastify's own per-request work (its request
 * and reply objects, routing, query parsing and validation, the hook chains) costs more than
 * Node's HTTP code does (docs/performance.md, "The fast path"). FAST_PATH=0 turns it off: every
 * request then goes through Fastify, with the same answers.
 *
 * How it stays the same answer:
 * - Only representations a route marks as identified by URL (cache/representation-cache.ts, ServeOptions) are found
 *   here, by the request target exactly as received, and where the route negotiates its media type
 *   (a guide as JSON or Markdown), by the format the request's Accept chooses. The first GET for each target goes through
 *   Fastify (routing, validation, every hook) and teaches the cache the target's key.
 * - Each variant (content coding) and status (200, or 304 for If-None-Match) is sent here only
 *   after Fastify has sent it once: its headers are taken from that response, less the ones that
 *   belong to one request (request id, RateLimit, Date, connection headers). So CORS, security,
 *   caching and content headers are whatever the hooks made, not a copy kept in step by hand.
 * - The request id is made as Fastify makes it, the client is counted against its rate limit as
 *   the rate-limit hook counts it (in-process or in Redis), and the request is counted in
 *   /metrics and logged with the same fields.
 *
 * Anything else goes to Fastify: another method (HEAD included), a request with a body or without
 * exactly one Host header, a target or variant not seen yet, stale content, an overloaded event loop (Fastify sheds it), a client
 * over its rate limit (Fastify answers the 429), a closing server. A cached search page is a hit
 * like any other, so it is answered even while the search budget refuses new searches: it costs
 * no search.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../../config.js';
import { requestIdFor } from '../request-id.js';
import type { RepresentationCache, UrlHit } from '../cache/representation-cache.js';
import { hasValidHost } from '../plugins/hardening.js';
import type { LoadShedding } from '../plugins/load-shedding.js';
import type { ObserveRequest } from '../plugins/metrics.js';
import type { EarlyCount, RateLimiter } from '../plugins/rate-limit.js';
import { inFrontOfFastify } from './server-front.js';

export interface EarlyAnswersOptions {
  config: Config;
  cache: RepresentationCache;
  rateLimit: RateLimiter;
  loadShedding: LoadShedding;
  observe: ObserveRequest;
  log: FastifyBaseLogger;
}

/** The client address as Fastify's request.ip has it (TRUST_PROXY: the nearest untrusted X-Forwarded-For entry). */
function clientAddress(config: Config): (request: IncomingMessage) => string {
  if (config.trustProxy === false) return (request) => request.socket.remoteAddress ?? '';
  const trust = proxyAddr.compile([...config.trustProxy]);
  return (request) => {
    const addresses = proxyAddr.all(request, trust);
    return addresses[addresses.length - 1] ?? '';
  };
}

/** Log levels at which every request is logged (the request line is at info). */
const INFO_OR_FINER: ReadonlySet<string> = new Set(['trace', 'debug', 'info']);

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function registerEarlyAnswers(app: FastifyInstance, options: EarlyAnswersOptions): void {
  const { config, cache, rateLimit, loadShedding, observe, log } = options;
  const addressOf = clientAddress(config);
  let closing = false;

  const send = (request: IncomingMessage, response: ServerResponse, hit: UrlHit, startedAt: number, rateLimitValue?: string): void => {
    const requestId = requestIdFor(request.headers);
    // A flat list costs writeHead a twentieth of what copying the headers into an object does.
    const headers = [...hit.sent.headers, 'x-request-id', requestId];
    if (rateLimitValue !== undefined) headers.push('ratelimit', rateLimitValue);
    hit.count();
    response.writeHead(hit.status, headers);
    response.end(hit.body);
    const seconds = (performance.now() - startedAt) / 1000;
    observe('GET', hit.sent.route, hit.status, seconds);
    if (INFO_OR_FINER.has(log.level)) {
      log.info(
        { requestId, method: 'GET', route: hit.sent.route, status: hit.status, durationMs: Math.round(seconds * 100_000) / 100 },
        'request',
      );
    }
  };

  const answerEarly = (request: IncomingMessage, response: ServerResponse, next: RequestListener): void => {
    const startedAt = performance.now();
    if (request.method !== 'GET' || closing || hasBody(request) || !hasValidHost(request)) {
      next(request, response);
      return;
    }
    const hit = cache.findByUrl(
      request.url ?? '',
      request.headers.accept,
      request.headers['accept-encoding'],
      request.headers['if-none-match'],
    );
    if (hit === undefined || loadShedding.isUnderPressure()) {
      next(request, response);
      return;
    }
    const counted = rateLimit.countEarly(request, addressOf(request), log);
    if (counted === undefined) {
      send(request, response, hit, startedAt);
      return;
    }
    const settle = (result: EarlyCount): void => {
      if (result.over) next(request, response);
      else send(request, response, hit, startedAt, result.rateLimit);
    };
    if ('over' in counted) settle(counted);
    else void counted.then(settle);
  };

  inFrontOfFastify(app, answerEarly);
  app.register(
    fastifyPlugin(async (instance) => {
      // While closing, Fastify answers with Connection: close, so that clients leave.
      instance.addHook('preClose', async () => {
        closing = true;
      });
    }),
  );
}

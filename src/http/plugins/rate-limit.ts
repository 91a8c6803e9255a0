/**
 * Per-client rate limits: RATE_LIMIT_PER_MINUTE requests per client IP in fixed one-minute windows
 * (aligned to the clock, so every instance agrees on when a window ends).
 *
 * Our own small limiter rather than @fastify/rate-limit: that plugin hooks routes, so unknown URLs
 * (404s) are never limited nor get headers; it answers 429 in its own JSON shape; and it speaks an
 * older draft of the headers. Here one application-wide onRequest hook counts every request,
 * matched or not, and throws an AppError so the 429 is our problem+json.
 *
 * Headers follow draft-ietf-httpapi-ratelimit-headers-11 (Structured Fields):
 *   RateLimit-Policy: "per-ip";q=600;w=60      the quota and window, the same on every response
 *   RateLimit: "per-ip";r=599;t=42             requests left in this window, seconds until it ends
 * A 429 also has Retry-After, equal to `t` (never earlier than the window's end, per the draft).
 *
 * The client is request.ip: the socket's peer, or, when TRUST_PROXY names the peer, the nearest
 * X-Forwarded-For entry that is not itself a trusted proxy. A client can therefore never pick its
 * own key by sending X-Forwarded-For. IPv6 clients are counted per /64, the block one subscriber
 * usually holds, so rotating addresses inside it does not multiply the budget.
 *
 * With REDIS_URL the counters live in Redis (INCR + PEXPIRE in one script), shared by every
 * instance and worker. If Redis is unreachable or slow the service fails open onto the in-process
 * counters: no request waits on Redis (no offline queue, a short command timeout, and a pause
 * before trying Redis again), the outage is logged once and counted in metrics
 * (rate-limit-counters.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../../config.js';
import { AppError } from '../problems.js';
import type { MetricsTable } from './metrics.js';
import { connectRedisCounter, createWindowCounter } from './rate-limit-counters.js';

export const RATE_LIMIT_POLICY_NAME = 'per-ip';
const WINDOW_MS = 60_000;
/** Operational endpoints answer the platform (probes, scrapers), which must never be throttled; OPTIONS is exempt too. */
export const RATE_LIMIT_EXEMPT_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

export interface RateLimitOptions {
  config: Config;
  /** Where the limiter adds what it counts, for /metrics. */
  metrics: MetricsTable;
}

/**
 * The RateLimit header of a request counted outside Fastify, or `over` (Fastify then answers the
 * 429). RateLimit-Policy is the same on every response, so it is in what Fastify sent already.
 */
export type EarlyCount = { over: false; rateLimit: string } | { over: true };

export interface RateLimiter {
  /**
   * Counts a request answered before Fastify (early-answers.ts) against client `ip`; undefined
   * when rate limiting is off. A request over its budget is marked as counted and must then be
   * handed to Fastify, whose hook answers the 429 from that count instead of counting it again.
   */
  countEarly(raw: IncomingMessage, ip: string, log: FastifyBaseLogger): EarlyCount | Promise<EarlyCount> | undefined;
}

const COUNTED = Symbol('guides.rateLimitCount');
type CountedRequest = IncomingMessage & { [COUNTED]?: { count: number; now: number } };

/**
 * Registers the limiter as an application-wide onRequest hook (register it after CORS, so a 429
 * still carries the CORS headers). Returns the count for early answers.
 */
export function registerRateLimit(app: FastifyInstance, { config, metrics }: RateLimitOptions): RateLimiter {
  const stats = { limited: 0, storeErrors: 0 };
  metrics.add(
    {
      name: 'guides_rate_limited_total',
      type: 'counter',
      read: () => stats.limited,
      help: 'Requests refused with 429 because the client spent its budget.',
    },
    {
      name: 'guides_rate_limit_store_errors_total',
      type: 'counter',
      read: () => stats.storeErrors,
      help: 'Requests counted in-process because Redis failed or was unreachable (fail-open).',
    },
  );
  const limit = config.rateLimitPerMinute;
  if (limit === 0) return { countEarly: () => undefined };
  const policy = `"${RATE_LIMIT_POLICY_NAME}";q=${limit};w=${WINDOW_MS / 1000}`;
  const counter = createWindowCounter(WINDOW_MS, stats);

  const resetSecondsAt = (now: number): number => Math.max(1, Math.ceil((WINDOW_MS - (now % WINDOW_MS)) / 1000));
  const remaining = (count: number, resetSeconds: number): string =>
    `"${RATE_LIMIT_POLICY_NAME}";r=${Math.max(0, limit - count)};t=${resetSeconds}`;

  const decide = (reply: FastifyReply, count: number, now: number): AppError | undefined => {
    const resetSeconds = resetSecondsAt(now);
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit', remaining(count, resetSeconds));
    if (count <= limit) return undefined;
    stats.limited += 1;
    return new AppError(
      'rate-limited',
      `This client sent more than ${limit} requests this minute. Retry after the number of seconds in Retry-After.`,
      { headers: { 'retry-after': String(resetSeconds) } },
    );
  };

  const onRequest = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    // CORS preflights are protocol, not use: a 429 there would reach browser code as an opaque
    // CORS failure instead of a readable problem, and browsers cache preflights for a day anyway.
    // The path is read from the URL: request.routeOptions builds a new object on every access.
    const url = request.url;
    const queryStart = url.indexOf('?');
    if (request.method === 'OPTIONS' || RATE_LIMIT_EXEMPT_PATHS.has(queryStart === -1 ? url : url.slice(0, queryStart))) {
      done();
      return;
    }
    const early = (request.raw as CountedRequest)[COUNTED];
    if (early !== undefined) {
      done(decide(reply, early.count, early.now));
      return;
    }
    const now = Date.now();
    const counted = counter.count(request.ip, now, request.log);
    if (typeof counted === 'number') done(decide(reply, counted, now));
    else void counted.then((n) => done(decide(reply, n, now)));
  };

  const countEarly = (raw: IncomingMessage, ip: string, log: FastifyBaseLogger): EarlyCount | Promise<EarlyCount> => {
    const now = Date.now();
    const settle = (n: number): EarlyCount => {
      if (n <= limit) return { over: false, rateLimit: remaining(n, resetSecondsAt(now)) };
      (raw as CountedRequest)[COUNTED] = { count: n, now };
      return { over: true };
    };
    const counted = counter.count(ip, now, log);
    return typeof counted === 'number' ? settle(counted) : counted.then(settle);
  };

  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onRequest', onRequest);
      const url = config.redisUrl;
      if (url !== undefined) {
        instance.addHook('onReady', async () => {
          counter.useRedis(await connectRedisCounter(url, config.rateLimitKeyPrefix, instance.log));
        });
        instance.addHook('onClose', async () => counter.close());
      }
    }),
  );
  return { countEarly };
}

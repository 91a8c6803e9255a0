/** Configuration from the environment, validated at start; every problem is reported at once. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_GUIDE_BYTES } from './guides/limits.js';
import { SEARCH_PRIORITIES } from './store/open-store.js';
import type { SearchPriority } from './store/open-store.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  databaseUrl: string;
  port: number;
  host: string;
  /** Origin (and optional path prefix) of every absolute link, without a trailing slash. */
  publicBaseUrl: string;
  contentDir: string;
  /** Largest guide file an import accepts, in bytes; a larger one is an invalid file. */
  maxGuideBytes: number;
  /** Keys from CURSOR_SECRET: the first signs, all verify. Empty: use the key kept in the database. */
  cursorSecrets: readonly string[];
  redisUrl?: string;
  /** Requests per client IP per minute; 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  /** Prefix of the rate-limit keys in Redis, so several deployments can share one Redis. */
  rateLimitKeyPrefix: string;
  /** false, or the proxy addresses/CIDRs whose X-Forwarded-For is honoured. */
  trustProxy: false | readonly string[];
  logLevel: LogLevel;
  /** Cache-Control max-age and stale-while-revalidate for successful responses, in seconds. */
  cacheMaxAgeSeconds: number;
  cacheStaleWhileRevalidateSeconds: number;
  /** Megabytes of rendered responses (identity and compressed bodies) kept in memory; 0 keeps none. */
  responseCacheMb: number;
  /** How often a server checks the database for a new import, in milliseconds. */
  contentPollMs: number;
  shutdownGraceMs: number;
  pgPoolSize: number;
  /** Slow-client limits (Node's headersTimeout, requestTimeout, keepAliveTimeout), in milliseconds. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Longest request target (path and query) answered; longer ones get 414. */
  maxUrlLength: number;
  /** Largest request line plus headers Node parses; more gets 431. */
  maxHeaderBytes: number;
  /** Mean event-loop delay above which requests are shed with 503; 0 turns shedding off. */
  maxEventLoopDelayMs: number;
  /** Searches run at once; more wait in the queue. 0 turns the search budget off (no queue, no per-client limit). */
  searchConcurrency: number;
  /** Searches that may wait for one of those; one more is refused with 503. */
  searchQueueLength: number;
  /** Searches in flight (running or waiting) from one client; one more is refused with 429. 0: no per-client limit. */
  searchConcurrencyPerClient: number;
  /** SQLite: worker threads that run searches off the event loop; 0 runs them on it. */
  searchWorkers: number;
  /** SQLite: how the search workers share the CPU with the event loop (SEARCH_PRIORITY: idle, low or normal). */
  searchPriority: SearchPriority;
  /** Cache hits answered before Fastify (src/http/fast-path/); FAST_PATH=0 sends every request through Fastify. */
  fastPath: boolean;
  /** Origins (scheme://host[:port]) a browser may call POST /mcp from; empty: any. */
  mcpAllowedOrigins: readonly string[];
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/** The sample content shipped with the package. */
export const SAMPLE_CONTENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'content');

type Env = Readonly<Record<string, string | undefined>>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const value = read(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return Number(value);
  };

  const databaseUrl = read('DATABASE_URL') ?? 'sqlite:./data/guides.db';
  if (!/^sqlite:.+/.test(databaseUrl) && !/^postgres(ql)?:\/\/.+/.test(databaseUrl)) {
    problems.push('DATABASE_URL must be sqlite:<file> or postgres://user@host/database');
  }
  const port = integer('PORT', 3000, 0, 65535);
  const host = read('HOST') ?? '127.0.0.1';

  let publicBaseUrl = (read('PUBLIC_BASE_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    const url = new URL(publicBaseUrl);
    if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) throw new Error('shape');
  } catch {
    problems.push(
      'PUBLIC_BASE_URL must be an absolute http(s) URL without query, fragment or credentials, such as https://api.example.com',
    );
    publicBaseUrl = `http://localhost:${port}`;
  }

  const cursorSecrets = (read('CURSOR_SECRET') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (cursorSecrets.some((secret) => secret.length < 32)) {
    problems.push('CURSOR_SECRET keys must each be at least 32 characters (comma-separated; the first signs)');
  }

  const redisUrl = read('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\/.+/.test(redisUrl)) problems.push('REDIS_URL must start with redis:// or rediss://');

  const trustProxyValue = read('TRUST_PROXY');
  let trustProxy: Config['trustProxy'] = false;
  if (trustProxyValue !== undefined && !['off', 'false', '0', 'no'].includes(trustProxyValue.toLowerCase())) {
    const entries = trustProxyValue
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const isAddress = (entry: string): boolean =>
      ['loopback', 'linklocal', 'uniquelocal'].includes(entry) || /^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(entry);
    if (entries.length === 0 || !entries.every(isAddress)) {
      problems.push(
        'TRUST_PROXY must be off, or the comma-separated addresses or CIDRs of your proxies (such as 10.0.0.0/8 or loopback); "true" is refused because any client could then choose its own address',
      );
    } else {
      trustProxy = entries;
    }
  }

  const searchPriority = (read('SEARCH_PRIORITY') ?? 'idle') as SearchPriority;
  if (!SEARCH_PRIORITIES.includes(searchPriority)) problems.push(`SEARCH_PRIORITY must be one of: ${SEARCH_PRIORITIES.join(', ')}`);

  const mcpAllowedOrigins: string[] = [];
  for (const entry of (read('MCP_ALLOWED_ORIGINS') ?? '*')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (entry === '*') continue;
    try {
      const url = new URL(entry);
      if (!['http:', 'https:'].includes(url.protocol) || url.origin !== entry.replace(/\/+$/, '')) throw new Error('shape');
      mcpAllowedOrigins.push(url.origin);
    } catch {
      problems.push(
        'MCP_ALLOWED_ORIGINS must be * (any) or comma-separated origins such as https://app.example.com or http://localhost:5173',
      );
    }
  }

  const logLevel = (read('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of: ${LOG_LEVELS.join(', ')}`);

  const config: Config = {
    databaseUrl,
    port,
    host,
    publicBaseUrl,
    contentDir: path.resolve(read('CONTENT_DIR') ?? SAMPLE_CONTENT_DIR),
    maxGuideBytes: integer('MAX_GUIDE_BYTES', DEFAULT_MAX_GUIDE_BYTES, 1024, 268_435_456),
    cursorSecrets,
    ...(redisUrl ? { redisUrl } : {}),
    rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 600, 0, 1_000_000),
    rateLimitKeyPrefix: read('RATE_LIMIT_KEY_PREFIX') ?? 'guides:ratelimit:',
    trustProxy,
    logLevel,
    cacheMaxAgeSeconds: integer('CACHE_MAX_AGE', 60, 0, 31_536_000),
    cacheStaleWhileRevalidateSeconds: integer('CACHE_STALE_WHILE_REVALIDATE', 300, 0, 31_536_000),
    responseCacheMb: integer('RESPONSE_CACHE_MB', 16, 0, 65_536),
    contentPollMs: integer('CONTENT_POLL_MS', 1000, 50, 5000),
    shutdownGraceMs: integer('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    pgPoolSize: integer('PG_POOL_SIZE', 10, 1, 1000),
    headersTimeoutMs: integer('HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer('REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    keepAliveTimeoutMs: integer('KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    maxUrlLength: integer('MAX_URL_LENGTH', 8192, 256, 65_536),
    maxHeaderBytes: integer('MAX_HEADER_BYTES', 16_384, 1024, 1_048_576),
    maxEventLoopDelayMs: integer('MAX_EVENT_LOOP_DELAY_MS', 1000, 0, 60_000),
    searchConcurrency: integer('SEARCH_CONCURRENCY', 4, 0, 10_000),
    searchQueueLength: integer('SEARCH_QUEUE_LENGTH', 256, 0, 100_000),
    searchConcurrencyPerClient: integer('SEARCH_CONCURRENCY_PER_CLIENT', 4, 0, 10_000),
    searchWorkers: integer('SEARCH_WORKERS', 1, 0, 64),
    searchPriority,
    fastPath: integer('FAST_PATH', 1, 0, 1) === 1,
    mcpAllowedOrigins,
  };
  if (config.headersTimeoutMs > config.requestTimeoutMs) problems.push('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS');
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/**
 * The counters behind the rate limit: a client's key (IPv6 by /64), an in-process counter per
 * fixed window, and a Redis counter shared by every instance that fails open onto the in-process
 * one, so that no request ever waits on a Redis that is down or slow.
 */
import type { Redis as RedisClient } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

/** Clients tracked per window in memory; beyond that, new clients share one counter (an attack of that many addresses is not a per-client problem). */
const MAX_TRACKED_CLIENTS = 500_000;
const REDIS_COMMAND_TIMEOUT_MS = 100;
/** After a Redis failure, use the local counters this long before trying Redis again. */
const REDIS_RETRY_PAUSE_MS = 1000;

/** The key a client is counted under: IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by /64. */
export function clientKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const lower = ip.toLowerCase();
  if (lower.startsWith('::ffff:') && lower.includes('.')) return lower.slice(7);
  const [head = '', tail] = lower.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0'), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export function createMemoryCounter() {
  let window = -1;
  let counts = new Map<string, number>();
  return (key: string, windowId: number): number => {
    if (windowId !== window) {
      window = windowId;
      counts = new Map();
    }
    const slot = counts.size >= MAX_TRACKED_CLIENTS && !counts.has(key) ? '(overflow)' : key;
    const count = (counts.get(slot) ?? 0) + 1;
    counts.set(slot, count);
    return count;
  };
}

const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/** How long start-up waits for the first Redis connection before serving with local counters. */
const REDIS_FIRST_CONNECT_WAIT_MS = 500;

export interface RedisCounter {
  count(key: string, windowId: number, ttlMs: number): Promise<number>;
  close(): void;
}

export async function connectRedisCounter(url: string, prefix: string, log: FastifyBaseLogger): Promise<RedisCounter> {
  // Loaded only with REDIS_URL: ioredis costs ~0.1 s of start-up that a server without Redis never needs.
  const { Redis } = await import('ioredis');
  const redis: RedisClient = new Redis(url, {
    lazyConnect: true,
    // Without these, commands queue while Redis is down and every request waits ~10 s.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  redis.defineCommand('guidesCountHit', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  const countHit = (redis as unknown as { guidesCountHit(key: string, ttlMs: number): Promise<number> }).guidesCountHit.bind(redis);
  let isDown = false;
  redis.on('error', (err) => {
    if (!isDown) log.warn({ err }, 'rate-limit Redis unreachable: counting in-process until it is back');
    isDown = true;
  });
  redis.on('ready', () => {
    if (isDown) log.info('rate-limit Redis reachable again');
    isDown = false;
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    redis.connect().catch(() => {
      // Reported by the error listener; ioredis keeps reconnecting.
    }),
    new Promise((resolve) => {
      timer = setTimeout(resolve, REDIS_FIRST_CONNECT_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  return {
    async count(key, windowId, ttlMs) {
      return Number(await countHit(`${prefix}${windowId}:${key}`, ttlMs));
    },
    close() {
      redis.disconnect();
    },
  };
}

/** Counts a client's request in a window; `storeErrors` counts the requests counted in-process because Redis failed. */
export interface WindowCounter {
  count(ip: string, now: number, log: FastifyBaseLogger): number | Promise<number>;
  /** Counts in Redis from now on (while it answers). */
  useRedis(counter: RedisCounter): void;
  close(): void;
}

/** This request's count for the client in the current window: in Redis when it answers, else in-process. */
export function createWindowCounter(windowMs: number, stats: { storeErrors: number }): WindowCounter {
  const countLocally = createMemoryCounter();
  let redis: RedisCounter | undefined;
  let redisPausedUntil = 0;
  return {
    count(ip, now, log) {
      const windowId = Math.floor(now / windowMs);
      const key = clientKey(ip);
      if (redis === undefined || now < redisPausedUntil) return countLocally(key, windowId);
      // Keys expire a second after their window ends, so Redis holds about one window of counters.
      const ttlMs = windowMs - (now % windowMs) + 1000;
      return redis.count(key, windowId, ttlMs).catch((err: unknown) => {
        stats.storeErrors += 1;
        redisPausedUntil = Date.now() + REDIS_RETRY_PAUSE_MS;
        log.debug({ err }, 'rate-limit Redis call failed: counted in-process');
        return countLocally(key, windowId);
      });
    },
    useRedis(counter) {
      redis = counter;
    },
    close() {
      redis?.close();
    },
  };
}

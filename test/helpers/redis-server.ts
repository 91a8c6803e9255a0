/**
 * Redis for tests: the machine's shared server (TEST_REDIS_URL, default redis://127.0.0.1:6379),
 * used with a unique key prefix and never stopped; and private `redis-server` processes on spare
 * ports, for tests that must kill Redis. When Redis is missing the tests skip with a loud warning,
 * except under CI=true, where that is a failure.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function missing(what: string, reason: string): false {
  const message = `${reason}: ${what}`;
  if (process.env.CI === 'true') throw new Error(`${message} cannot run, and CI requires it.`);
  console.warn(`\n${'!'.repeat(78)}\n!! SKIPPED: ${message}.\n!! Start Redis (and install redis-server) to run them.\n${'!'.repeat(78)}\n`);
  return false;
}

async function answersPing(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** True when the shared Redis answers; otherwise skips loudly (fails under CI=true). */
export async function requireSharedRedis(what: string): Promise<boolean> {
  return (await answersPing(SHARED_REDIS_URL)) || missing(what, `Redis at ${SHARED_REDIS_URL} is unreachable`);
}

/** True when a private redis-server can be started; otherwise skips loudly (fails under CI=true). */
export async function requireRedisServerBinary(what: string): Promise<boolean> {
  const ok = await new Promise<boolean>((resolve) => {
    const child = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
  return ok || missing(what, 'redis-server is not installed');
}

/** A key prefix no other test run uses. */
export function uniqueKeyPrefix(): string {
  return `guides-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** Kills this server (SIGKILL: an outage, not a clean shutdown) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after kill). */
  restart(): Promise<void>;
}

/** Starts a private, disk-less redis-server on a spare port, only for this test. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i += 1) {
      if (await answersPing(url)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`private redis-server on port ${port} did not start`);
  };
  await start();
  return {
    url,
    port,
    async kill() {
      const running = child;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    restart: start,
  };
}

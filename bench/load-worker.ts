/**
 * The load generator: a long-lived child process (pinned to its own CPU by bench/run.ts) that runs
 * autocannon jobs sent over IPC and answers with exact latency percentiles. It records every
 * response time itself (autocannon's histogram rounds to whole milliseconds) and rotates through
 * the job's request paths, so a job with many distinct paths defeats response caches.
 */
import autocannon from 'autocannon';
import { percentileOfSorted } from './lib/measure.js';

export interface LoadJob {
  url: string;
  /** Request paths, used in order and then again from the start. */
  paths: string[];
  headers?: Record<string, string>;
  /** POST bodies, used in order like paths (then every request goes to paths[0]). */
  bodies?: string[];
  connections: number;
  durationSeconds: number;
  /** The status every response should have (200, or 304 for revalidation). */
  expectStatus: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  /** Answers with the expected status per second. */
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Responses with another status than expected, and socket errors/timeouts. */
  unexpected: number;
  errors: number;
  statusCounts: Record<string, number>;
  /** Distinct paths sent, over requests: below 1 means some paths were sent more than once. */
  distinctPathRatio: number;
}

/** Jobs with at most this many paths send them as prebuilt requests (bench/run.ts keeps its baseline within it). */
const PREBUILT_PATHS = 64;

export function runLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let latencies = new Float64Array(1 << 16);
    let count = 0;
    let unexpected = 0;
    const statusCounts: Record<string, number> = {};
    let next = 0;
    const started = performance.now();
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        duration: job.durationSeconds,
        // autocannon stops at its first tick after the duration, and ticks every `sampleInt` (1 s by
        // default): a 0.4-s smoke run took a whole second. A tick of a quarter of the duration, never
        // more than the default, ends a run within a quarter of its length (runs of 4 s or more keep
        // the default).
        sampleInt: Math.min(1000, job.durationSeconds * 250),
        pipelining: 1,
        headers: job.headers ?? {},
        // A few paths: prebuilt requests, each connection cycling through them (autocannon rebuilds a
        // request with a setupRequest every time, which would make the load generator the bottleneck).
        // Many paths: handed out one by one across all connections, so none is sent twice.
        requests: job.bodies
          ? [
              {
                method: 'POST',
                path: job.paths[0] as string,
                setupRequest: (request) => {
                  const body = (job.bodies as string[])[next % (job.bodies as string[]).length] as string;
                  next += 1;
                  return { ...request, body };
                },
              },
            ]
          : job.paths.length <= PREBUILT_PATHS
            ? job.paths.map((path) => ({ method: 'GET', path }))
            : [
                {
                  method: 'GET',
                  setupRequest: (request) => {
                    const path = job.paths[next % job.paths.length] as string;
                    next += 1;
                    return { ...request, path };
                  },
                },
              ],
      },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        const seconds = (performance.now() - started) / 1000;
        const sorted = latencies.subarray(0, count).sort();
        resolve({
          requests: count,
          seconds,
          // Only answers with the expected status count: a 503 from load shedding is not throughput.
          requestsPerSecond: (count - unexpected) / Math.max(result.duration, 1e-9),
          p50Ms: percentileOfSorted(sorted, 0.5),
          p90Ms: percentileOfSorted(sorted, 0.9),
          p99Ms: percentileOfSorted(sorted, 0.99),
          maxMs: percentileOfSorted(sorted, 1),
          unexpected,
          errors: result.errors + result.timeouts,
          statusCounts,
          distinctPathRatio:
            count === 0 || (!job.bodies && job.paths.length <= PREBUILT_PATHS)
              ? 1
              : Math.min(1, next / count, (job.bodies ?? job.paths).length / count),
        });
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTime;
      statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
      if (statusCode !== job.expectStatus) unexpected += 1;
    });
  });
}

// As a child process: run each job received over IPC, answer with its result.
if (process.send) {
  const send = process.send.bind(process);
  process.on('message', (message: { id: number; job: LoadJob }) => {
    runLoad(message.job).then(
      (result) => send({ id: message.id, result }),
      (error: unknown) => send({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  send({ ready: true });
}

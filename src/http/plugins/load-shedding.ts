/**
 * Load shedding: when the event loop is saturated (its mean delay over the last sample above
 * MAX_EVENT_LOOP_DELAY_MS), new requests get a 503 service-unavailable problem with Retry-After
 * at once, instead of queueing behind work the server cannot finish in time. Health probes and
 * /metrics are never shed: an overloaded instance is alive, and the operator needs to see it.
 */
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { AppError, RETRY_AFTER_SECONDS } from '../problems.js';
import fastifyPlugin from 'fastify-plugin';
import type { MetricsTable } from './metrics.js';

const NEVER_SHED: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);
/** How often the event-loop delay is sampled; a shed decision lasts until the next sample. */
const SAMPLE_INTERVAL_MS = 500;

export interface LoadShedding {
  /** Whether the event loop is over its delay limit now (requests that reach Fastify are then shed). */
  isUnderPressure(): boolean;
}

export function registerLoadShedding(app: FastifyInstance, config: Config, metrics: MetricsTable): LoadShedding {
  const stats = { shed: 0 };
  metrics.add({
    name: 'guides_load_shed_total',
    type: 'counter',
    read: () => stats.shed,
    help: 'Requests refused with 503 because the event loop was saturated.',
  });
  if (config.maxEventLoopDelayMs === 0) return { isUnderPressure: () => false };
  let isUnderPressure = (): boolean => false;
  const overloaded = new AppError(
    'service-unavailable',
    'The server is overloaded right now. Retry after the number of seconds in Retry-After.',
    { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } },
  );
  // Start-up (schema compilation, plugin loading) blocks the loop once; the first samples after
  // it would shed the first real requests, so shedding is armed only after two clean samples.
  let armedAt = Infinity;
  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onReady', async () => {
        armedAt = Date.now() + 2 * SAMPLE_INTERVAL_MS;
      });
      await instance.register(underPressure, {
        maxEventLoopDelay: config.maxEventLoopDelayMs,
        sampleInterval: SAMPLE_INTERVAL_MS,
        pressureHandler: (request: FastifyRequest) => {
          const route = request.routeOptions.url;
          if ((route !== undefined && NEVER_SHED.has(route)) || Date.now() < armedAt) return undefined;
          // No log line of its own: the request's log line (status 503) is written anyway, and
          // under overload every extra write makes it worse.
          stats.shed += 1;
          // A rejected promise goes to our error handler, which renders the problem.
          return Promise.reject(overloaded);
        },
      });
      isUnderPressure = (): boolean => instance.isUnderPressure();
    }),
  );
  return { isUnderPressure: () => isUnderPressure() };
}

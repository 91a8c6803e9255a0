/**
 * /metrics in the Prometheus text format (prom-client): request count and latency histogram by
 * method, route and status; process metrics; representation-cache, compression, rate-limit,
 * load-shedding and connection-error counters.
 *
 * The request path pays a map lookup and a few additions: the request series are plain numbers per
 * (method, route, status), turned into Prometheus samples only when /metrics is scraped (prom-client's
 * own Histogram re-validates and re-hashes the labels on every observation). Every other number is
 * a plain counter in its component, also read only at scrape time.
 *
 * Under `guides serve --workers N` a scrape sees the whole instance (metrics-cluster.ts).
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Metric } from 'prom-client';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { RepresentationCache } from '../cache/representation-cache.js';
import type { ClientErrorCounter } from './hardening.js';
import type { LoadSheddingStats } from './load-shedding.js';
import type { SearchBudgetStats } from './search-budget.js';
import type { RateLimitStats } from './rate-limit.js';
import { clusterMetricsText, isClusterWorker, joinClusterMetrics } from './metrics-cluster.js';

export const METRICS_PATH = '/metrics';

export interface MetricsSources {
  cache: RepresentationCache;
  rateLimit: RateLimitStats;
  loadShedding: LoadSheddingStats;
  searchBudget: SearchBudgetStats;
  connections: ClientErrorCounter;
}

let processRegistry: Registry | undefined;

/** Process metrics (CPU, memory, event-loop lag, GC) are per process: collected once however many apps a process builds. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface RequestSeries {
  labels: { method: string; route: string; status_code: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last one is above every bound. */
  buckets: number[];
}

interface Sample {
  metricName?: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * http_requests_total and http_request_duration_seconds as plain numbers, exposed to prom-client
 * as two metrics whose samples are built at scrape time (and summed across workers like its own).
 */
function createRequestSeries(registry: Registry) {
  const series = new Map<string, RequestSeries>();
  const metric = (name: string, help: string, type: 'counter' | 'histogram', samples: () => Sample[]): Metric =>
    ({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
    }) as unknown as Metric;
  registry.registerMetric(
    metric('http_requests_total', 'HTTP requests answered, by method, route pattern and status.', 'counter', () =>
      [...series.values()].map((s) => ({ labels: s.labels, value: s.count })),
    ),
  );
  const durationName = 'http_request_duration_seconds';
  registry.registerMetric(
    metric(durationName, 'Time from request received to response sent, by method, route pattern and status.', 'histogram', () => {
      const samples: Sample[] = [];
      for (const s of series.values()) {
        let cumulative = 0;
        LATENCY_BUCKETS.forEach((bound, i) => {
          cumulative += s.buckets[i]!;
          samples.push({ metricName: `${durationName}_bucket`, labels: { ...s.labels, le: String(bound) }, value: cumulative });
        });
        samples.push({ metricName: `${durationName}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
        samples.push({ metricName: `${durationName}_sum`, labels: s.labels, value: s.sum });
        samples.push({ metricName: `${durationName}_count`, labels: s.labels, value: s.count });
      }
      return samples;
    }),
  );
  return (method: string, route: string, status: number, seconds: number): void => {
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      s = {
        labels: { method, route, status_code: String(status) },
        count: 0,
        sum: 0,
        buckets: new Array<number>(LATENCY_BUCKETS.length + 1).fill(0),
      };
      series.set(key, s);
    }
    s.count += 1;
    s.sum += seconds;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i += 1;
    s.buckets[i]! += 1;
  };
}

/**
 * One component number at scrape time: a plain value, or one value per label (the label's name
 * is `label`). Counters are reset and set to the total, since the components keep the totals.
 */
interface ComponentMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  label?: string;
  read: () => number | Record<string, number>;
}

function componentMetrics({ cache, rateLimit, loadShedding, searchBudget, connections }: MetricsSources): ComponentMetric[] {
  return [
    {
      name: 'guides_cache_lookups_total',
      type: 'counter',
      label: 'result',
      read: () => ({ hit: cache.stats.hits, miss: cache.stats.misses }),
      help: 'Representation cache lookups, by result (hit: served from memory; miss: rendered from the database).',
    },
    {
      name: 'guides_cache_declined_total',
      type: 'counter',
      read: () => cache.stats.declined,
      help: 'Misses not kept in the cache because their request had not missed recently (a one-off request; also counted as misses).',
    },
    {
      name: 'guides_early_answers_total',
      type: 'counter',
      read: () => cache.stats.earlyHits,
      help: "Cache hits answered in the HTTP server's request listener, before Fastify (also counted as hits).",
    },
    { name: 'guides_cache_entries', type: 'gauge', read: () => cache.size, help: 'Representations held in the cache.' },
    {
      name: 'guides_cache_bytes',
      type: 'gauge',
      read: () => cache.bytes,
      help: 'Bytes held by the cache (identity and compressed bodies).',
    },
    {
      name: 'guides_compressions_total',
      type: 'counter',
      label: 'coding',
      read: () => ({ br: cache.stats.compressions.br, gzip: cache.stats.compressions.gzip }),
      help: 'Cached representations compressed, by content coding (each at most once per content version).',
    },
    {
      name: 'guides_rate_limited_total',
      type: 'counter',
      read: () => rateLimit.limited,
      help: 'Requests refused with 429 because the client spent its budget.',
    },
    {
      name: 'guides_rate_limit_store_errors_total',
      type: 'counter',
      read: () => rateLimit.storeErrors,
      help: 'Requests counted in-process because Redis failed or was unreachable (fail-open).',
    },
    {
      name: 'guides_load_shed_total',
      type: 'counter',
      read: () => loadShedding.shed,
      help: 'Requests refused with 503 because the event loop was saturated.',
    },
    {
      name: 'guides_search_shed_total',
      type: 'counter',
      read: () => searchBudget.shed,
      help: 'Searches refused with 503 because the search queue was full (SEARCH_QUEUE_LENGTH).',
    },
    {
      name: 'guides_search_client_limited_total',
      type: 'counter',
      read: () => searchBudget.clientLimited,
      help: 'Searches refused with 429 because their client had SEARCH_CONCURRENCY_PER_CLIENT searches in flight.',
    },
    {
      name: 'guides_search_queued',
      type: 'gauge',
      read: () => searchBudget.queued,
      help: 'Searches waiting for one of the SEARCH_CONCURRENCY running slots.',
    },
    {
      name: 'guides_connection_errors_total',
      type: 'counter',
      label: 'problem',
      read: () => ({ ...connections.clientErrors }),
      help: 'Connections answered before a request could be parsed (slow, oversized or malformed), by problem.',
    },
  ];
}

/** Builds this app's registry and the per-request observation. */
export function createAppRegistry(sources: MetricsSources) {
  const registry = new Registry();
  const registers = [registry];
  const observe = createRequestSeries(registry);
  for (const { name, help, type, label, read } of componentMetrics(sources)) {
    const labelNames = label === undefined ? [] : [label];
    if (type === 'gauge') {
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          const value = read();
          if (typeof value === 'number') this.set(value);
          else for (const [labelValue, n] of Object.entries(value)) this.labels(labelValue).set(n);
        },
      });
    } else {
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          const value = read();
          if (typeof value === 'number') this.inc(value);
          else for (const [labelValue, n] of Object.entries(value)) this.labels(labelValue).inc(n);
        },
      });
    }
  }
  return { registry, observe };
}

/** Counts one answered request in http_requests_total and http_request_duration_seconds. */
export type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

/** Registers the per-request observation and GET /metrics; returns the observation, for requests answered before Fastify. */
export function registerMetrics(app: FastifyInstance, sources: MetricsSources): ObserveRequest {
  const { registry, observe } = createAppRegistry(sources);
  const isWorker = isClusterWorker();
  if (isWorker) joinClusterMetrics([processMetrics(), registry]);
  const onResponse = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    observe(request.method, request.routeOptions.url ?? '(unmatched)', reply.statusCode, reply.elapsedTime / 1000);
    done();
  };
  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onResponse', onResponse);
      instance.get(METRICS_PATH, { schema: { hide: true } }, async (_request, reply) => {
        const merged = Registry.merge([processMetrics(), registry]);
        // A worker whose primary does not answer still reports its own numbers.
        const text = (isWorker ? await clusterMetricsText() : undefined) ?? (await merged.metrics());
        return reply.header('cache-control', 'no-store').type(merged.contentType).send(text);
      });
    }),
  );
  return observe;
}

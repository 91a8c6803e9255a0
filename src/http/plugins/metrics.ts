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
 * Under `guides serve --workers N`, whichever worker a scrape reaches asks the primary process,
 * which gathers every worker's numbers (prom-client's AggregatorRegistry: counters and histograms
 * summed), so one scrape sees the whole instance, not one worker picked by the kernel.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Metric } from 'prom-client';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RepresentationCache } from './caching.js';
import type { ClientErrorCounter } from './hardening.js';
import type { LoadSheddingStats } from './load-shedding.js';
import type { SearchBudgetStats } from './search-budget.js';
import type { RateLimitStats } from './rate-limit.js';
import fastifyPlugin from 'fastify-plugin';

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

interface Sample { metricName?: string; labels: Record<string, string>; value: number }

/**
 * http_requests_total and http_request_duration_seconds as plain numbers, exposed to prom-client
 * as two metrics whose samples are built at scrape time (and summed across workers like its own).
 */
function createRequestSeries(registry: Registry) {
  const series = new Map<string, RequestSeries>();
  const metric = (name: string, help: string, type: 'counter' | 'histogram', samples: () => Sample[]): Metric => ({
    name, help, type, aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
  }) as unknown as Metric;
  registry.registerMetric(metric('http_requests_total', 'HTTP requests answered, by method, route pattern and status.', 'counter',
    () => [...series.values()].map((s) => ({ labels: s.labels, value: s.count }))));
  const durationName = 'http_request_duration_seconds';
  registry.registerMetric(metric(durationName, 'Time from request received to response sent, by method, route pattern and status.', 'histogram', () => {
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
  }));
  return (method: string, route: string, status: number, seconds: number): void => {
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      s = { labels: { method, route, status_code: String(status) }, count: 0, sum: 0, buckets: new Array<number>(LATENCY_BUCKETS.length + 1).fill(0) };
      series.set(key, s);
    }
    s.count += 1;
    s.sum += seconds;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i += 1;
    s.buckets[i]! += 1;
  };
}

/** Builds this app's registry and the per-request observation. */
export function createAppRegistry(sources: MetricsSources) {
  const registry = new Registry();
  const registers = [registry];
  const observe = createRequestSeries(registry);
  const { cache, rateLimit, loadShedding, searchBudget, connections } = sources;
  new Counter({
    name: 'guides_cache_lookups_total', help: 'Representation cache lookups, by result (hit: served from memory; miss: rendered from the database).',
    labelNames: ['result'] as const, registers,
    collect() {
      this.reset();
      this.labels('hit').inc(cache.stats.hits);
      this.labels('miss').inc(cache.stats.misses);
    },
  });
  new Counter({
    name: 'guides_cache_declined_total', help: 'Misses not kept in the cache because their request had not missed recently (a one-off request; also counted as misses).', registers,
    collect() {
      this.reset();
      this.inc(cache.stats.declined);
    },
  });
  new Counter({
    name: 'guides_early_answers_total', help: 'Cache hits answered in the HTTP server\'s request listener, before Fastify (also counted as hits).', registers,
    collect() {
      this.reset();
      this.inc(cache.stats.earlyHits);
    },
  });
  new Gauge({
    name: 'guides_cache_entries', help: 'Representations held in the cache.', registers,
    collect() {
      this.set(cache.size);
    },
  });
  new Gauge({
    name: 'guides_cache_bytes', help: 'Bytes held by the cache (identity and compressed bodies).', registers,
    collect() {
      this.set(cache.bytes);
    },
  });
  new Counter({
    name: 'guides_compressions_total', help: 'Cached representations compressed, by content coding (each at most once per content version).',
    labelNames: ['coding'] as const, registers,
    collect() {
      this.reset();
      this.labels('br').inc(cache.stats.compressions.br);
      this.labels('gzip').inc(cache.stats.compressions.gzip);
    },
  });
  new Counter({
    name: 'guides_rate_limited_total', help: 'Requests refused with 429 because the client spent its budget.', registers,
    collect() {
      this.reset();
      this.inc(rateLimit.limited);
    },
  });
  new Counter({
    name: 'guides_rate_limit_store_errors_total', help: 'Requests counted in-process because Redis failed or was unreachable (fail-open).', registers,
    collect() {
      this.reset();
      this.inc(rateLimit.storeErrors);
    },
  });
  new Counter({
    name: 'guides_load_shed_total', help: 'Requests refused with 503 because the event loop was saturated.', registers,
    collect() {
      this.reset();
      this.inc(loadShedding.shed);
    },
  });
  new Counter({
    name: 'guides_search_shed_total', help: 'Searches refused with 503 because the search queue was full (SEARCH_QUEUE_LENGTH).', registers,
    collect() {
      this.reset();
      this.inc(searchBudget.shed);
    },
  });
  new Counter({
    name: 'guides_search_client_limited_total', help: 'Searches refused with 429 because their client had SEARCH_CONCURRENCY_PER_CLIENT searches in flight.', registers,
    collect() {
      this.reset();
      this.inc(searchBudget.clientLimited);
    },
  });
  new Gauge({
    name: 'guides_search_queued', help: 'Searches waiting for one of the SEARCH_CONCURRENCY running slots.', registers,
    collect() {
      this.set(searchBudget.queued);
    },
  });
  new Counter({
    name: 'guides_connection_errors_total', help: 'Connections answered before a request could be parsed (slow, oversized or malformed), by problem.',
    labelNames: ['problem'] as const, registers,
    collect() {
      this.reset();
      for (const [problem, count] of Object.entries(connections.clientErrors)) this.labels(problem).inc(count);
    },
  });

  return { registry, observe };
}

const CLUSTER_METRICS_REQUEST = 'guides:cluster-metrics-request';
const CLUSTER_METRICS_REPLY = 'guides:cluster-metrics-reply';
const CLUSTER_METRICS_TIMEOUT_MS = 3000;

interface ClusterMetricsMessage { type: string; id: number; text?: string }

function isClusterMetricsMessage(message: unknown, type: string): message is ClusterMetricsMessage {
  return typeof message === 'object' && message !== null && (message as ClusterMetricsMessage).type === type;
}

/** In the primary of `serve --workers N`: answers workers' requests for the metrics of all workers. */
export function answerClusterMetricsRequests(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isClusterMetricsMessage(message, CLUSTER_METRICS_REQUEST)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: CLUSTER_METRICS_REPLY, id: message.id, text }),
      () => worker.send({ type: CLUSTER_METRICS_REPLY, id: message.id }),
    );
  });
}

let nextRequestId = 0;
const waiting = new Map<number, (text: string | undefined) => void>();

/** In a worker: every worker's metrics through the primary, or undefined if it does not answer in time. */
function clusterMetricsText(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const id = nextRequestId;
    nextRequestId += 1;
    const timer = setTimeout(() => {
      waiting.delete(id);
      resolve(undefined);
    }, CLUSTER_METRICS_TIMEOUT_MS);
    waiting.set(id, (text) => {
      clearTimeout(timer);
      waiting.delete(id);
      resolve(text);
    });
    process.send?.({ type: CLUSTER_METRICS_REQUEST, id });
  });
}

/** Counts one answered request in http_requests_total and http_request_duration_seconds. */
export type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

/** Registers the per-request observation and GET /metrics; returns the observation, for requests answered before Fastify. */
export function registerMetrics(app: FastifyInstance, sources: MetricsSources): ObserveRequest {
  const { registry, observe } = createAppRegistry(sources);
  const isWorker = cluster.isWorker && typeof process.send === 'function';
  if (isWorker) {
    // One app per worker process: these are the registries the primary collects from.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([processMetrics(), registry]);
    process.on('message', (message: unknown) => {
      if (isClusterMetricsMessage(message, CLUSTER_METRICS_REPLY)) waiting.get(message.id)?.(message.text);
    });
  }
  const onResponse = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    observe(request.method, request.routeOptions.url ?? '(unmatched)', reply.statusCode, reply.elapsedTime / 1000);
    done();
  };
  app.register(fastifyPlugin(async (instance) => {
    instance.addHook('onResponse', onResponse);
    instance.get(METRICS_PATH, { schema: { hide: true } }, async (_request, reply) => {
      const merged = Registry.merge([processMetrics(), registry]);
      // A worker whose primary does not answer still reports its own numbers.
      const text = (isWorker ? await clusterMetricsText() : undefined) ?? (await merged.metrics());
      return reply.header('cache-control', 'no-store').type(merged.contentType).send(text);
    });
  }));
  return observe;
}

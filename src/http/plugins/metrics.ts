/**
 * /metrics in the Prometheus text format (prom-client): request count and latency histogram by
 * method, route and status; process metrics; and what each component measures (the representation
 * cache, rate limits, load shedding, the search budget, connection errors), which it adds to the
 * app's MetricsTable itself: this module knows none of them.
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
import { clusterMetricsText, isClusterWorker, joinClusterMetrics } from './metrics-cluster.js';

export const METRICS_PATH = '/metrics';

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
 * One number a component keeps, read at scrape time: a plain value, or one value per label (the
 * label's name is `label`). Counters are reset and set to the total, since the components keep the totals.
 */
export interface MeasuredNumber {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  label?: string;
  read: () => number | Record<string, number>;
}

/** This app's metrics: the request series, and the numbers components add; /metrics lists them in that order. */
export interface MetricsTable {
  /** Adds numbers a component keeps, each read when /metrics is scraped. */
  add(...numbers: MeasuredNumber[]): void;
  registry: Registry;
  observe: ObserveRequest;
}

export function createMetricsTable(): MetricsTable {
  const registry = new Registry();
  const registers = [registry];
  const add = (...numbers: MeasuredNumber[]): void => {
    for (const { name, help, type, label, read } of numbers) {
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
  };
  return { add, registry, observe: createRequestSeries(registry) };
}

/** Counts one answered request in http_requests_total and http_request_duration_seconds. */
export type ObserveRequest = (method: string, route: string, status: number, seconds: number) => void;

/** Registers the per-request observation and GET /metrics; returns the observation, for requests answered before Fastify. */
export function registerMetrics(app: FastifyInstance, { registry, observe }: MetricsTable): ObserveRequest {
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

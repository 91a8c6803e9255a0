/** /metrics: Prometheus text that a strict parser accepts, with the request, cache and process series. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const METRIC_NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
// Values are what Go's strconv.ParseFloat accepts (Prometheus parses with it): NaN in any case, ±Inf.
const SAMPLE_LINE = new RegExp(
  `^(${METRIC_NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?\\})? (-?\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?|[Nn]a[Nn]|[+-]Inf)$`,
);
const HELP_LINE = new RegExp(`^# HELP (${METRIC_NAME}) .*$`);
const TYPE_LINE = new RegExp(`^# TYPE (${METRIC_NAME}) (counter|gauge|histogram|summary|untyped)$`);

/** Parses the text exposition format strictly: any line that is not HELP, TYPE or a sample fails. */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const lines = text.split('\n');
  expect(lines.at(-1)).toBe('');
  for (const line of lines.slice(0, -1)) {
    // The format ignores empty lines; prom-client separates registries with one.
    if (line === '' || HELP_LINE.test(line)) continue;
    const type = TYPE_LINE.exec(line);
    if (type) {
      expect(types.has(type[1]!), `duplicate TYPE for ${type[1]}`).toBe(false);
      types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = SAMPLE_LINE.exec(line);
    if (!sample) throw new Error(`not a Prometheus exposition line: ${JSON.stringify(line)}`);
    const labels = Object.fromEntries(
      [...(sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    samples.push({
      name: sample[1]!,
      labels,
      value: /^[Nn]a[Nn]$/.test(sample[3]!) ? NaN : sample[3] === '+Inf' ? Infinity : sample[3] === '-Inf' ? -Infinity : Number(sample[3]),
    });
  }
  return { samples, types };
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

describe('GET /metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('exposes parseable Prometheus text with request counts and latency by route and status', async () => {
    const guide = '/api/v1/guides/reduce-food-waste';
    const first = await t.app.inject({ url: guide });
    await t.app.inject({ url: guide, headers: { 'if-none-match': first.headers.etag as string } });
    await t.app.inject({ url: guide });
    await t.app.inject({ url: '/no/such/thing' });
    await t.app.inject({ url: '/api/v1/guides/no-such-guide' });

    const res = await t.app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.etag).toBeUndefined();
    const { samples, types } = parseExposition(res.body);

    expect(types.get('http_requests_total')).toBe('counter');
    expect(types.get('http_request_duration_seconds')).toBe('histogram');
    const route = '/api/v1/guides/:slug';
    expect(value(samples, 'http_requests_total', { method: 'GET', route, status_code: '200' })).toBe(2);
    expect(value(samples, 'http_requests_total', { method: 'GET', route, status_code: '304' })).toBe(1);
    expect(value(samples, 'http_requests_total', { method: 'GET', route, status_code: '404' })).toBe(1);
    expect(value(samples, 'http_requests_total', { method: 'GET', route: '(unmatched)', status_code: '404' })).toBe(1);
    expect(value(samples, 'http_request_duration_seconds_count', { method: 'GET', route, status_code: '200' })).toBe(2);
    expect(value(samples, 'http_request_duration_seconds_bucket', { method: 'GET', route, status_code: '200', le: '+Inf' })).toBe(2);
    expect(value(samples, 'http_request_duration_seconds_sum', { method: 'GET', route, status_code: '200' })).toBeGreaterThan(0);

    // The guide was rendered at its first two reads, kept at the second (the cache's admission: the
    // first was declined), and then served from the cache.
    expect(value(samples, 'guides_cache_lookups_total', { result: 'miss' })).toBeGreaterThanOrEqual(2);
    expect(value(samples, 'guides_cache_declined_total')).toBeGreaterThanOrEqual(1);
    expect(value(samples, 'guides_cache_lookups_total', { result: 'hit' })).toBeGreaterThanOrEqual(1);
    expect(value(samples, 'guides_cache_entries')).toBeGreaterThanOrEqual(1);
    expect(value(samples, 'guides_cache_bytes')).toBeGreaterThan(1000);
    for (const name of ['guides_rate_limited_total', 'guides_rate_limit_store_errors_total', 'guides_load_shed_total']) {
      expect(value(samples, name), name).toBe(0);
    }
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(value(samples, name), name).toBeGreaterThanOrEqual(0);
    }
  });

  it('counts 429s in the rate-limit counter', async () => {
    const limited = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1' } });
    try {
      const left = 60_000 - (Date.now() % 60_000);
      if (left < 3000) await new Promise((resolve) => setTimeout(resolve, left + 50));
      await limited.app.inject({ url: '/api/v1/product' });
      expect((await limited.app.inject({ url: '/api/v1/product' })).statusCode).toBe(429);
      const { samples } = parseExposition((await limited.app.inject({ url: '/metrics' })).body);
      expect(value(samples, 'guides_rate_limited_total')).toBe(1);
      expect(value(samples, 'http_requests_total', { route: '/api/v1/product', status_code: '429' })).toBe(1);
    } finally {
      await limited.close();
    }
  });

  it('rejects a line the format does not allow (the parser is strict)', () => {
    expect(() => parseExposition('http_requests_total{method=GET} 1\n')).toThrow(/not a Prometheus exposition line/);
    expect(() => parseExposition('# TYPE x counter\nx 1\n')).not.toThrow();
  });
});

/** Load shedding: a saturated event loop gets 503 service-unavailable with Retry-After, then recovers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Keeps the event loop busy in 250 ms slices for `ms`: what a flood of CPU-heavy requests does to it. */
async function saturateEventLoop(ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const sliceEnd = Date.now() + 250;
    while (Date.now() < sliceEnd) {
      // busy
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('load shedding', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { MAX_EVENT_LOOP_DELAY_MS: '100' } });
    // Shedding is armed after two clean samples past start-up.
    await sleep(1200);
  });
  afterAll(() => t.close());

  it('answers 503 service-unavailable with Retry-After while the event loop is saturated, spares the probes, and recovers', async () => {
    expect((await t.app.inject({ url: '/api/v1/product' })).statusCode).toBe(200);
    await saturateEventLoop(1300);
    const shed = await t.app.inject({ url: '/api/v1/product', headers: { origin: 'https://app.example' } });
    expect(shed.statusCode).toBe(503);
    expect(shed.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(shed.headers['retry-after']).toBe('5');
    expect(shed.headers['access-control-allow-origin']).toBe('*');
    expect(shed.headers.etag).toBeUndefined();
    expect(shed.json()).toEqual({
      type: `${TEST_BASE_URL}/problems/service-unavailable`,
      title: 'Service unavailable',
      status: 503,
      detail: 'The server is overloaded right now. Retry after the number of seconds in Retry-After.',
    });
    expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    const metrics = (await t.app.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/^guides_load_shed_total [1-9]\d*$/m);

    let status = 503;
    for (let i = 0; i < 40 && status === 503; i += 1) {
      await sleep(100);
      status = (await t.app.inject({ url: '/api/v1/product' })).statusCode;
    }
    expect(status).toBe(200);
  });

  it('can be turned off with MAX_EVENT_LOOP_DELAY_MS=0', async () => {
    const off = await buildTestApp({ env: { MAX_EVENT_LOOP_DELAY_MS: '0' } });
    try {
      await sleep(1200);
      await saturateEventLoop(1300);
      expect((await off.app.inject({ url: '/api/v1/product' })).statusCode).toBe(200);
    } finally {
      await off.close();
    }
  });
});

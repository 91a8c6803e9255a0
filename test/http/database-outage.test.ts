/**
 * The database goes away and comes back: requests that need it get 503 service-unavailable (never
 * 500), /readyz reports not ready, and both recover by themselves once the database is reachable
 * again. The app talks to a real PostgreSQL through a TCP proxy that the test cuts (closing the
 * port and every open connection, as a network partition or a database restart would) and
 * restores; the machine's PostgreSQL itself is never touched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { buildTestApp, TEST_BASE_URL } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';
import type { TestDatabase } from '../helpers/postgres-database.js';
import { startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';

const hasPostgres = await requirePostgres('the database-outage test');

describe.runIf(hasPostgres)('when the database becomes unreachable', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const store = createPostgresGuideStore({ connectionString: throughProxy(database.url, proxy), connectionTimeoutMs: 1000 });
    t = await buildTestApp({ store, env: { CONTENT_POLL_MS: '200' } });
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 with Retry-After while it is gone, keeps serving what is cached, and recovers by itself', async () => {
    // Read twice: a representation is kept from its second request (the cache's admission).
    await t.app.inject({ url: '/api/v1/guides/reduce-food-waste' });
    const cachedGuide = await t.app.inject({ url: '/api/v1/guides/reduce-food-waste' });
    expect(cachedGuide.statusCode).toBe(200);
    expect((await t.app.inject({ url: '/readyz' })).statusCode).toBe(200);

    await proxy.cut();
    for (const url of ['/api/v1/guides?q=allergen', '/api/v1/guides/haccp-plan-for-small-restaurants', '/readyz']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(503);
      expect(res.headers['retry-after'], url).toMatch(/^[1-9]\d*$/);
      expect(res.headers['content-type'], url).toBe('application/problem+json; charset=utf-8');
      expect(res.headers.etag, url).toBeUndefined();
      expect(res.json(), url).toMatchObject({ type: `${TEST_BASE_URL}/problems/service-unavailable`, status: 503 });
      expect(res.body, url).not.toMatch(/ECONNREFUSED|postgres|pg_|stack|\/work\//i);
    }
    // A representation rendered before the outage is still the current content: it is served.
    const stale = await t.app.inject({ url: '/api/v1/guides/reduce-food-waste' });
    expect(stale.statusCode).toBe(200);
    expect(stale.headers.etag).toBe(cachedGuide.headers.etag);

    await proxy.restore();
    let ready = 503;
    for (let i = 0; i < 100 && ready !== 200; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ready = (await t.app.inject({ url: '/readyz' })).statusCode;
    }
    expect(ready).toBe(200);
    const search = await t.app.inject({ url: '/api/v1/guides?q=allergen' });
    expect(search.statusCode).toBe(200);
    expect(search.json<{ items: unknown[] }>().items.length).toBeGreaterThan(0);
    expect((await t.app.inject({ url: '/api/v1/guides/haccp-plan-for-small-restaurants' })).statusCode).toBe(200);
  });
});

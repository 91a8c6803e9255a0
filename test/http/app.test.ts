import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_BASE_URL } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';

describe('the whole API surface', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  const routes = [
    '/api/v1/product',
    '/api/v1/guides',
    '/api/v1/guides/reduce-food-waste',
    '/api/v1/resources',
    '/openapi.json',
    '/nowhere',
  ];

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)('answers %s with 405, Allow and a problem on every route', async (method) => {
    for (const url of routes) {
      const res = await t.app.inject({ method, url, payload: { a: 1 } });
      expect(res.statusCode, url).toBe(405);
      expect(res.headers.allow, url).toBe('GET, HEAD, OPTIONS');
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json()).toEqual({
        type: `${TEST_BASE_URL}/problems/method-not-allowed`,
        title: 'Method not allowed',
        status: 405,
        detail: 'This API is read-only: use GET or HEAD.',
      });
    }
  });

  it('refuses unknown and repeated query parameters on every v1 operation', async () => {
    for (const url of ['/api/v1/product?foo=1', '/api/v1/resources?format=xml', '/api/v1/guides/reduce-food-waste?q=x']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(400);
      const [error] = res.json<{ errors: { name: string; detail: string }[] }>().errors;
      expect(error!.detail, url).toBe('is not a parameter of this operation; accepted parameters: (none)');
    }
  });

  it("sends a strong ETag with every 200, the API's, /docs' and its assets', and 304 when it is sent back", async () => {
    const document = (await t.app.inject({ url: '/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>();
    const apiPaths = Object.entries(document.paths)
      .filter(([, operations]) => 'get' in operations)
      .map(([template]) => template.replace('{slug}', 'reduce-food-waste'));
    const page = (await t.app.inject({ url: '/docs/' })).body;
    const assets = [...page.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((match) => `/docs/${match[1]}`);
    expect(assets.length).toBeGreaterThan(4);
    const urls = [
      ...apiPaths,
      '/openapi.json',
      '/llms.txt',
      '/.well-known/api-catalog',
      '/problems/not-found',
      '/docs',
      '/docs/',
      ...assets,
    ];
    for (const url of urls) {
      for (const coding of [undefined, 'br', 'gzip']) {
        const headers: Record<string, string> = coding ? { 'accept-encoding': coding } : {};
        const res = await t.app.inject({ url, headers });
        const where = `${url} ${coding ?? 'identity'}`;
        expect(res.statusCode, where).toBe(200);
        expect(res.headers.etag, where).toMatch(/^"[^"]+"$/);
        const again = await t.app.inject({ url, headers: { ...headers, 'if-none-match': String(res.headers.etag) } });
        expect(again.statusCode, where).toBe(304);
        expect(again.headers.etag, where).toBe(res.headers.etag);
        expect(again.rawPayload.length, where).toBe(0);
        expect((await t.app.inject({ url, headers })).headers.etag, where).toBe(res.headers.etag);
      }
    }
  });

  it('answers HEAD like GET without a body', async () => {
    for (const url of routes.slice(0, 4)) {
      const get = await t.app.inject({ url });
      const head = await t.app.inject({ method: 'HEAD', url });
      expect(head.statusCode, url).toBe(200);
      expect(head.body, url).toBe('');
      expect(head.headers.etag, url).toBe(get.headers.etag);
      expect(head.headers['content-type'], url).toBe(get.headers['content-type']);
    }
  });

  it('answers a CORS preflight and a plain OPTIONS', async () => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/guides',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
    const plain = await t.app.inject({ method: 'OPTIONS', url: '/api/v1/product' });
    expect(plain.statusCode).toBe(204);
    expect(plain.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('sends Access-Control-Allow-Origin: * and no cookies on success and error', async () => {
    for (const url of ['/api/v1/guides', '/nowhere', '/api/v1/guides?limit=0']) {
      const res = await t.app.inject({ url, headers: { origin: 'https://app.example' } });
      expect(res.headers['access-control-allow-origin'], url).toBe('*');
      expect(res.headers['set-cookie'], url).toBeUndefined();
      expect(res.headers['access-control-allow-credentials'], url).toBeUndefined();
    }
  });

  it('echoes a sane X-Request-Id and replaces anything else', async () => {
    const echoed = await t.app.inject({ url: '/api/v1/product', headers: { 'x-request-id': 'abc-123_X.y:z' } });
    expect(echoed.headers['x-request-id']).toBe('abc-123_X.y:z');
    for (const bad of ['<script>', 'a'.repeat(129), 'has space', '']) {
      const res = await t.app.inject({ url: '/api/v1/product', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('answers 503 service-unavailable, never 500, when the database is gone', async () => {
    const broken = await buildTestApp();
    await broken.store.close();
    try {
      for (const url of ['/api/v1/guides/reduce-food-waste', '/api/v1/guides?q=menu', '/readyz']) {
        const res = await broken.app.inject({ url });
        expect(res.statusCode, url).toBe(503);
        expect(res.headers['retry-after'], url).toMatch(/^\d+$/);
        expect(res.json()).toMatchObject({ type: `${TEST_BASE_URL}/problems/service-unavailable`, status: 503 });
        expect(res.body).not.toMatch(/sqlite|database connection|stack|\.ts|\/work\//i);
      }
    } finally {
      await broken.app.close();
    }
  });

  it('reports liveness without touching the database', async () => {
    const res = await t.app.inject({ url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it('shows an import in the running app without a restart', async () => {
    const live = await buildTestApp({ env: { CONTENT_POLL_MS: '50' } });
    try {
      const before = (await live.app.inject({ url: '/api/v1/guides/reduce-food-waste' })).statusCode;
      const { makeContent, makeGuide } = await import('../helpers/guide-factory.js');
      await live.store.importContent(makeContent([makeGuide({ slug: 'brand-new' })]));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(before).toBe(200);
      expect((await live.app.inject({ url: '/api/v1/guides/brand-new' })).statusCode).toBe(200);
      expect((await live.app.inject({ url: '/api/v1/guides/reduce-food-waste' })).statusCode).toBe(404);
    } finally {
      await live.close();
    }
  });
});

describe('GET /api/v1/resources', () => {
  it("lists the built-in links with IANA relations, then the operator's links", async () => {
    const t = await buildTestApp();
    try {
      const res = await t.app.inject({ url: '/api/v1/resources' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        links: [
          {
            rel: 'service-desc',
            href: `${TEST_BASE_URL}/openapi.json`,
            type: 'application/openapi+json',
            title: 'OpenAPI definition of this API',
          },
          { rel: 'service-doc', href: `${TEST_BASE_URL}/docs`, type: 'text/html', title: 'API reference' },
          { rel: 'describedby', href: `${TEST_BASE_URL}/llms.txt`, type: 'text/markdown', title: 'Guide index for language models' },
          { rel: 'alternate', href: `${TEST_BASE_URL}/mcp`, type: 'application/json', title: 'MCP server (Streamable HTTP)' },
          {
            rel: 'terms-of-service',
            href: 'https://guides.example.com/terms',
            title: 'Terms of use for the guides and the API',
            type: 'text/html',
          },
          { rel: 'help', href: 'https://guides.example.com/help', title: 'Help and contact for API users', type: 'text/html' },
          {
            rel: 'license',
            href: 'https://creativecommons.org/licenses/by/4.0/',
            title: 'Guides are licensed CC BY 4.0',
            type: 'text/html',
          },
        ],
      });
    } finally {
      await t.close();
    }
  });
});

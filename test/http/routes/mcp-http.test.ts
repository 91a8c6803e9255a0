/**
 * POST /mcp at the HTTP level, through app.inject (every response checked against /openapi.json):
 * methods, Origin and Host checks, body limit, the shared rate limit, CORS, request ids and logs.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';
import type { TestApp } from '../../helpers/build-test-app.js';

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'inject', version: '1' },
};

/** A 2026-07-28 request as a client sends it: the envelope in _meta, the method (and name) in headers too. */
function modern(method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const name = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
  return {
    method: 'POST' as const,
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...name,
      ...headers,
    },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } }),
  };
}

describe('POST /mcp over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('answers a 2026-07-28 request with one JSON body, no session id, none of the REST caching headers', async () => {
    const res = await t.app.inject(
      modern('tools/call', { name: 'search_guides', arguments: { query: 'food', limit: 1 } }, { 'accept-encoding': 'br, gzip' }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const body = res.json<{ result: { structuredContent: { items: unknown[] } } }>();
    expect(body.result.structuredContent.items).toHaveLength(1);
    // Every kind of 2026-07-28 exchange is one JSON body, never an event stream.
    for (const [method, params] of [
      ['server/discover', {}],
      ['tools/list', {}],
      ['resources/list', {}],
      ['resources/templates/list', {}],
      ['resources/read', { uri: 'https://api.test.example/api/v1/guides/reduce-food-waste.md' }],
      ['tools/call', { name: 'get_guide', arguments: { slug: 'no-such-guide' } }],
    ] as const) {
      const answer = await t.app.inject(modern(method, params, 'uri' in params ? { 'mcp-name': params.uri } : {}));
      expect(answer.statusCode, method).toBe(200);
      expect(answer.headers['content-type'], method).toMatch(/^application\/json/);
    }
  });

  it('answers a 2025-06-18 initialize without a session id', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect(res.body).toContain('"protocolVersion":"2025-06-18"');
  });

  it('answers GET, HEAD and DELETE with 405 and Allow: POST, OPTIONS, before anything else', async () => {
    for (const method of ['GET', 'HEAD', 'DELETE', 'PUT'] as const) {
      const res = await t.app.inject({ method, url: '/mcp', headers: { accept: 'text/event-stream' } });
      expect(res.statusCode, method).toBe(405);
      expect(res.headers.allow).toBe('POST, OPTIONS');
      if (method !== 'HEAD') expect(res.json()).toMatchObject({ status: 405, title: 'Method not allowed' });
    }
    // The rest of the API keeps its read-only rule.
    const post = await t.app.inject({ method: 'POST', url: '/api/v1/guides' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('refuses a body over 64 KiB with a 413 problem', async () => {
    const request = modern('tools/call', { name: 'search_guides', arguments: { query: 'x'.repeat(70_000) } });
    const res = await t.app.inject(request);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ status: 413, title: 'Payload too large' });
  });

  it('leaves malformed messages to the SDK: its JSON-RPC errors, never a 500', async () => {
    const notJson = await t.app.inject({ ...modern('tools/list'), payload: '{not json' });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const wrongType = await t.app.inject({
      ...modern('tools/list'),
      headers: { ...modern('tools/list').headers, 'content-type': 'text/plain' },
    });
    expect(wrongType.statusCode).toBe(415);
    const mismatch = await t.app.inject(modern('tools/list', {}, { 'mcp-method': 'resources/list' }));
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json()).toMatchObject({ error: { code: -32020 } });
    const unknown = await t.app.inject(modern('no/such-method'));
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: { code: -32601 } });
  });

  it('refuses a Host that is not a loopback name while listening on a loopback address (DNS rebinding)', async () => {
    expect(t.config.host).toBe('127.0.0.1');
    for (const host of ['evil.example', 'evil.example:3000', '10.0.0.1']) {
      const res = await t.app.inject(modern('tools/list', {}, { host }));
      expect(res.statusCode, host).toBe(403);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    }
    for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']) {
      expect((await t.app.inject(modern('tools/list', {}, { host }))).statusCode, host).toBe(200);
    }
  });

  describe('on a public address, with MCP_ALLOWED_ORIGINS', () => {
    let pub: TestApp;
    beforeAll(async () => {
      pub = await buildTestApp({ env: { HOST: '0.0.0.0', MCP_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:5173' } });
    });
    afterAll(() => pub.close());

    it("answers a Host header that names no host with a 400 problem, never the SDK's 500", async () => {
      for (const host of ['a b', '[zz', 'x:99999']) {
        const res = await pub.app.inject(modern('tools/list', {}, { host }));
        expect(res.statusCode, host).toBe(400);
        expect(res.json()).toMatchObject({ status: 400, title: 'Bad request' });
      }
    });

    it('serves any Host, and only the listed Origins (or none)', async () => {
      expect((await pub.app.inject(modern('tools/list', {}, { host: 'api.example.com' }))).statusCode).toBe(200);
      for (const origin of ['https://app.example.com', 'http://localhost:5173']) {
        expect((await pub.app.inject(modern('tools/list', {}, { origin }))).statusCode, origin).toBe(200);
      }
      for (const origin of ['https://evil.example', 'http://app.example.com', 'http://localhost:5174', 'null']) {
        const res = await pub.app.inject(modern('tools/list', {}, { origin }));
        expect(res.statusCode, origin).toBe(403);
        expect(res.headers['x-request-id']).toBeTruthy();
      }
    });
  });

  describe('with more guides than a resources page holds', () => {
    let big: TestApp;
    beforeAll(async () => {
      const guides = Array.from({ length: 130 }, (_, i) =>
        makeGuide({
          slug: `guide-${String(i).padStart(3, '0')}`,
          publishedAt: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString().replace('.000', ''),
        }),
      );
      big = await buildTestApp({
        content: makeContent([...guides, makeGuide({ slug: 'retained-one', status: 'retained', publishedAt: '2026-06-01T00:00:00Z' })]),
      });
    });
    afterAll(() => big.close());

    it('lists every published guide once, newest first, over pages with nextCursor; a bad cursor is -32602', async () => {
      type ListResult = { result: { resources: Array<{ uri: string }>; nextCursor?: string } };
      const first = (await big.app.inject(modern('resources/list'))).json<ListResult>().result;
      expect(first.resources).toHaveLength(100);
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = (await big.app.inject(modern('resources/list', { cursor: first.nextCursor }))).json<ListResult>().result;
      expect(second.nextCursor).toBeUndefined();
      const uris = [...first.resources, ...second.resources].map((resource) => resource.uri);
      expect(uris).toEqual(
        Array.from({ length: 130 }, (_, i) => `https://api.test.example/api/v1/guides/guide-${String(129 - i).padStart(3, '0')}.md`),
      );
      const bad = await big.app.inject(modern('resources/list', { cursor: 'forged' }));
      expect(bad.json()).toMatchObject({ error: { code: -32602 } });
    });
  });

  it('accepts any Origin by default', async () => {
    expect((await t.app.inject(modern('tools/list', {}, { origin: 'https://anywhere.example' }))).statusCode).toBe(200);
  });

  it('answers the CORS preflight with the MCP headers allowed, and exposes the protocol version and limits', async () => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-protocol-version, mcp-method, mcp-name',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-methods'])).toBe('POST, OPTIONS');
    expect(
      String(preflight.headers['access-control-allow-headers'])
        .split(',')
        .map((h) => h.trim()),
    ).toEqual(['Content-Type', 'Accept', 'MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name', 'Mcp-Session-Id', 'Last-Event-ID']);
    expect(preflight.headers.allow).toBe('POST, OPTIONS');

    const res = await t.app.inject(modern('tools/list', {}, { origin: 'https://app.example.com' }));
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(
      String(res.headers['access-control-expose-headers'])
        .split(',')
        .map((h) => h.trim()),
    ).toEqual(['MCP-Protocol-Version', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id']);
    // The REST API's CORS is unchanged.
    const restPreflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/guides',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    });
    expect(restPreflight.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
  });

  describe('with a small rate limit', () => {
    let limited: TestApp;
    afterEach(() => limited.close());

    it('shares the REST budget and answers 429 problem+json with Retry-After once it is spent', async () => {
      limited = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
      expect((await limited.app.inject({ url: '/api/v1/product' })).statusCode).toBe(200);
      expect((await limited.app.inject(modern('tools/list'))).headers.ratelimit).toMatch(/^"per-ip";r=1;/);
      expect((await limited.app.inject(modern('tools/list'))).statusCode).toBe(200);
      const over = await limited.app.inject(modern('tools/list'));
      expect(over.statusCode).toBe(429);
      expect(over.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect(over.json()).toMatchObject({ status: 429, title: 'Too many requests' });
    });
  });

  describe('logging', () => {
    const lines: Array<Record<string, unknown>> = [];
    let logged: TestApp;
    beforeAll(async () => {
      const stream = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
          callback();
        },
      });
      logged = await buildTestApp({ logger: pino({ level: 'info' }, stream) });
    });
    afterAll(() => logged.close());

    it('echoes X-Request-Id and writes the one request line the REST API writes', async () => {
      const res = await logged.app.inject(modern('tools/list', {}, { 'x-request-id': 'mcp-test-42' }));
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-request-id']).toBe('mcp-test-42');
      await new Promise((resolve) => setImmediate(resolve));
      const requestLines = lines.filter((line) => line.requestId === 'mcp-test-42');
      expect(requestLines).toEqual([expect.objectContaining({ msg: 'request', method: 'POST', route: '/mcp', status: 200 })]);
    });
  });
});

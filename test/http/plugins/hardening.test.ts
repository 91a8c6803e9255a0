/**
 * Hardening: security headers and the URL cap through app.inject; the header cap, oversized
 * request lines, malformed requests and slowloris through a real socket, where Node answers before
 * any request exists (the clientError path).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_CONTENT_SECURITY_POLICY } from '../../../src/http/plugins/hardening.js';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  closed: boolean;
}

/** Writes `chunks` to a fresh connection (with `gapMs` between them) and reads until the server closes it. */
function rawExchange(port: number, chunks: string[], gapMs = 0): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      received += data;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset after answering; what it answered is what counts.
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', ...rest] = received.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), closed: true });
    });
    let i = 0;
    const writeNext = (): void => {
      if (socket.destroyed || i >= chunks.length) return;
      socket.write(chunks[i]!);
      i += 1;
      timer = setTimeout(writeNext, gapMs);
    };
    socket.on('connect', writeNext);
  });
}

describe('security headers and the URL cap', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { MAX_URL_LENGTH: '1024' } });
  });
  afterAll(() => t.close());

  it('sends nosniff, no-referrer, a restrictive CSP and HSTS on successes, 304s and problems alike', async () => {
    const ok = await t.app.inject({ url: '/api/v1/guides' });
    const notModified = await t.app.inject({ url: '/api/v1/guides', headers: { 'if-none-match': ok.headers.etag as string } });
    const problem = await t.app.inject({ url: '/nowhere' });
    for (const res of [ok, notModified, problem]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['content-security-policy']).toBe(
        "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      );
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000');
    }
    expect([ok.statusCode, notModified.statusCode, problem.statusCode]).toEqual([200, 304, 404]);
  });

  it('lets browser code read the headers a client needs (CORS exposed headers)', async () => {
    const res = await t.app.inject({ url: '/api/v1/guides?limit=1', headers: { origin: 'https://app.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(res.headers['access-control-expose-headers']).split(/,\s*/);
    for (const name of ['ETag', 'Link', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id', 'Retry-After', 'Last-Modified']) {
      expect(exposed).toContain(name);
    }
  });

  it('leaves /docs its own policy, so the reference page can run its scripts', async () => {
    const docs = await t.app.inject({ url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(docs.headers['content-security-policy']).not.toBe(API_CONTENT_SECURITY_POLICY);
  });

  it('answers a URL over MAX_URL_LENGTH with a 414 uri-too-long problem that keeps the usual headers', async () => {
    const atLimit = await t.app.inject({ url: `/api/v1/guides?q=${'a'.repeat(1024 - '/api/v1/guides?q='.length)}` });
    expect(atLimit.statusCode).toBe(400);
    for (const url of [`/api/v1/guides?q=${'a'.repeat(1100)}`, `/${'x'.repeat(2000)}`]) {
      const res = await t.app.inject({ url, headers: { origin: 'https://app.example' } });
      expect(res.statusCode).toBe(414);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json()).toEqual({
        type: `${TEST_BASE_URL}/problems/uri-too-long`,
        title: 'URI too long',
        status: 414,
        detail: 'The request URL is longer than this server accepts.',
      });
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['x-request-id']).toBeDefined();
      expect(res.headers.ratelimit).toBeDefined();
      expect(res.body).not.toContain('xxxx');
    }
  });
});

describe('connection-level limits on a real socket', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp({
      env: { MAX_HEADER_BYTES: '4096', MAX_URL_LENGTH: '1024', HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000' },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(() => t.close());

  const problemOf = (res: RawResponse): Record<string, unknown> => JSON.parse(res.body) as Record<string, unknown>;

  it('answers headers over MAX_HEADER_BYTES with a 431 problem and closes the connection', async () => {
    const res = await rawExchange(port, [`GET /api/v1/product HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(8000)}\r\n\r\n`]);
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.headers.connection).toBe('close');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    expect(problemOf(res)).toEqual({
      type: `${TEST_BASE_URL}/problems/request-header-fields-too-large`,
      title: 'Request header fields too large',
      status: 431,
      detail: 'The request headers are larger than this server accepts.',
    });
    expect(res.body).not.toContain('bbbb');
  });

  it('answers a request line too long for Node to parse with a 414 problem, not a 431', async () => {
    const res = await rawExchange(port, [`GET /api/v1/guides?q=${'a'.repeat(6000)} HTTP/1.1\r\nHost: x\r\n\r\n`]);
    expect(res.status).toBe(414);
    expect(problemOf(res)).toMatchObject({ type: `${TEST_BASE_URL}/problems/uri-too-long`, status: 414 });
  });

  it('answers a request Node cannot parse with a 400 bad-request problem', async () => {
    const res = await rawExchange(port, ['GET / HTTP/1.1\r\nHost: x\r\nBad Header Name: y\r\n\r\n']);
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({ type: `${TEST_BASE_URL}/problems/bad-request`, status: 400 });
  });

  it.each([
    ['two Host headers', 'GET /api/v1/product HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n'],
    ['two Host headers, differently cased', 'GET /api/v1/product HTTP/1.1\r\nHost: x\r\nhOST: x\r\nConnection: close\r\n\r\n'],
    ['no Host header on HTTP/1.1', 'GET /api/v1/product HTTP/1.1\r\nConnection: close\r\n\r\n'],
    ['two Host headers on HTTP/1.0', 'GET /api/v1/product HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n'],
  ])('answers a request with %s with a 400 problem (RFC 9112 §3.2)', async (_name, request) => {
    // Cached first, so that the answer in front of Fastify would have it too.
    for (let i = 0; i < 2; i += 1) expect((await fetch(`http://127.0.0.1:${port}/api/v1/product`)).status).toBe(200);
    const res = await rawExchange(port, [request]);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.headers['x-request-id']).toBeDefined();
    expect(problemOf(res)).toEqual({
      type: `${TEST_BASE_URL}/problems/bad-request`,
      title: 'Bad request',
      status: 400,
      detail: 'An HTTP/1.1 request must carry exactly one Host header.',
    });
  });

  it('serves HTTP/1.0 without a Host header and HTTP/1.1 with one', async () => {
    expect((await rawExchange(port, ['GET /api/v1/product HTTP/1.0\r\n\r\n'])).status).toBe(200);
    expect((await rawExchange(port, ['GET /api/v1/product HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'])).status).toBe(200);
  });

  it('cuts a slowloris connection that trickles headers after HEADERS_TIMEOUT_MS with a 408 problem', async () => {
    // One header line every 100 ms, for 60 s if the server let it (Node checks timeouts only every 30 s by default).
    const drip = ['GET /api/v1/product HTTP/1.1\r\nHost: x\r\n', ...Array.from({ length: 600 }, (_, i) => `X-Drip-${i}: y\r\n`)];
    const res = await rawExchange(port, drip, 100);
    expect(res.status).toBe(408);
    expect(problemOf(res)).toEqual({
      type: `${TEST_BASE_URL}/problems/request-timeout`,
      title: 'Request timeout',
      status: 408,
      detail: 'The client did not send a complete request in time; the connection is closed.',
    });
  }, 10_000);

  // Found by the raw-socket fuzzer (test/fuzz/http-fuzz.test.ts): `HEAD /api/v1/guides?q=0` with
  // `Connection: close`, sent and half-closed at once, was never answered.
  it('answers a client that half-closes its connection right after the request, also when the answer takes a while', async () => {
    const halfClosed = (request: string): Promise<{ status: number; head: string; bytes: number }> =>
      new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', reject);
        socket.on('close', () => {
          const received = Buffer.concat(chunks);
          const head = received.subarray(0, Math.max(0, received.indexOf('\r\n\r\n'))).toString('latin1');
          resolve({ status: Number(head.split(' ')[1]), head, bytes: received.length - head.length - 4 });
        });
        // The request and the FIN together, as `nc -q`, some scripts and the fuzzer send them.
        socket.end(request);
      });
    // Uncached pages: each answered after a turn of the event loop or more (the second one is
    // compressed on zlib's thread pool).
    const head = await halfClosed('HEAD /api/v1/guides?q=0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(head.status).toBe(200);
    const list = await halfClosed('GET /api/v1/guides?limit=7 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n\r\n');
    expect(list.status).toBe(200);
    expect(list.head).toMatch(/\r\ncontent-encoding: br\r\n/i);
    expect(list.bytes).toBe(Number(/\r\ncontent-length: (\d+)/i.exec(list.head)?.[1]));
  });

  it('serves ordinary requests on the same server, and counts the refused connections in /metrics', async () => {
    const ok = await fetch(`http://127.0.0.1:${port}/api/v1/product`);
    expect(ok.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const problem of ['request-header-fields-too-large', 'uri-too-long', 'bad-request', 'request-timeout']) {
      expect(metrics).toMatch(new RegExp(`^guides_connection_errors_total\\{problem="${problem}"\\} [1-9]`, 'm'));
    }
  });
});

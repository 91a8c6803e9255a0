/**
 * The method rule (contract, "Everywhere"): any method but GET, HEAD and OPTIONS is a 405 problem
 * with Allow, decided before any request body is read or parsed. Through a real socket, where
 * Node's parser, Expect: 100-continue and unread bodies behave as they do for clients.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  ms: number;
}

/**
 * Writes `request` to a fresh connection and reads the first response (by its Content-Length);
 * `interim` collects informational (1xx) status lines seen before it.
 */
function exchange(port: number, request: string | Buffer, interim: number[] = []): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no final response in time; received: ${received.toString('latin1').slice(0, 200)}`));
    }, 3000);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      for (;;) {
        const end = received.indexOf('\r\n\r\n');
        if (end === -1) return;
        const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
        const status = Number(statusLine.split(' ')[1]);
        if (status < 200) {
          interim.push(status);
          received = received.subarray(end + 4);
          continue;
        }
        const headers = Object.fromEntries(
          lines.map((line) => {
            const colon = line.indexOf(':');
            return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
          }),
        );
        const body = received.subarray(end + 4);
        if (body.length < Number(headers['content-length'] ?? 0)) return;
        clearTimeout(timer);
        socket.destroy();
        resolve({ status, headers, body: body.toString('utf8'), ms: performance.now() - started });
        return;
      }
    });
    socket.write(request);
  });
}

const readOnlyProblem = {
  type: `${TEST_BASE_URL}/problems/method-not-allowed`,
  title: 'Method not allowed',
  status: 405,
  detail: 'This API is read-only: use GET or HEAD.',
};

describe('the method decides before the body', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(() => t.close());

  const requests: [string, string | Buffer][] = [
    ['POST with broken JSON', 'POST /api/v1/guides HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{x}'],
    [
      'POST with __proto__ in JSON',
      'POST /api/v1/product HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{"__proto__":{"a":1},"b":2}',
    ],
    [
      'POST with an unknown Content-Type',
      'POST /api/v1/guides/reduce-food-waste HTTP/1.1\r\nHost: x\r\nContent-Type: foo/bar\r\nContent-Length: 3\r\n\r\nabc',
    ],
    [
      'PUT with a 2 MB body',
      Buffer.concat([
        Buffer.from('PUT /api/v1/resources HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n'),
        Buffer.alloc(2_000_000, 0x61),
      ]),
    ],
    [
      'QUERY with a Content-Type',
      'QUERY /api/v1/guides HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    ],
    ['QUERY without a Content-Type', 'QUERY /api/v1/guides HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['QUERY with a body but no Content-Type', 'QUERY /openapi.json HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello'],
    [
      'DELETE with chunked broken JSON',
      'DELETE /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{x}\r\n0\r\n\r\n',
    ],
    [
      'PATCH with a urlencoded body',
      'PATCH /api/v1/guides HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b',
    ],
  ];

  it.each(requests)('answers %s with 405 and Allow', async (_name, request) => {
    const res = await exchange(port, request);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['x-request-id']).toBeDefined();
    expect(JSON.parse(res.body)).toEqual(readOnlyProblem);
  });

  it('answers a POST with Expect: 100-continue with its final 405 at once, without asking for the body', async () => {
    const interim: number[] = [];
    const res = await exchange(
      port,
      'POST /api/v1/guides HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n',
      interim,
    );
    expect(interim).toEqual([]);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toEqual(readOnlyProblem);
  });

  it('still sends 100 Continue to an allowed method that asks for it', async () => {
    const interim: number[] = [];
    const res = await exchange(
      port,
      'GET /api/v1/product HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n',
      interim,
    );
    expect(interim).toEqual([100]);
    expect(res.status).toBe(200);
  });

  it.each(['FOO', 'get', 'BREW'])(
    "answers a method Node's parser does not know (%s) with the 405 problem and Allow, not a bare 400",
    async (method) => {
      const res = await exchange(port, `${method} /api/v1/guides?q=x HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(JSON.parse(res.body)).toEqual(readOnlyProblem);
    },
  );

  it('serves the next request on a connection whose refused body it did not parse', async () => {
    const res = await exchange(
      port,
      'POST /api/v1/product HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{x}',
    );
    expect(res.status).toBe(405);
    const both = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (data: string) => {
        text += data;
        if (text.includes('"name":"Restaurant Guides"')) socket.destroy();
      });
      socket.on('close', () => resolve(text));
      socket.write(
        'POST /api/v1/product HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{x}GET /api/v1/product HTTP/1.1\r\nHost: x\r\n\r\n',
      );
    });
    expect(both).toMatch(/^HTTP\/1\.1 405 [\s\S]*HTTP\/1\.1 200 /);
  });
});

/**
 * Lazy response serializers: Fastify's own fast-json-stringify serializers, compiled on a route's
 * first answer or one per event-loop turn once the server listens, instead of before it starts.
 */
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createLazySerializers } from '../../../src/http/plugins/lazy-serializers.js';
import type { LazySerializers } from '../../../src/http/plugins/lazy-serializers.js';

const Item = {
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string' } },
  required: ['id', 'name'],
  additionalProperties: false,
} as const;

function appWith(serializers: LazySerializers): FastifyInstance {
  const app = Fastify({ logger: false, schemaController: { compilersFactory: { buildSerializer: serializers.buildSerializer } } });
  serializers.compileAfterListen(app);
  app.addSchema({ $id: 'Item', ...Item });
  for (const n of [1, 2, 3]) {
    app.get(
      `/items/${n}`,
      {
        schema: { response: { 200: { $ref: 'Item#' }, 404: { type: 'object', properties: { missing: { type: 'integer' } } } } },
      },
      async () => ({ id: n, name: `item ${n}`, secret: 'never sent' }),
    );
  }
  return app;
}

describe('lazy response serializers', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("compiles none before the server listens, and a route's on its first answer, with the route's schema", async () => {
    const serializers = createLazySerializers();
    app = appWith(serializers);
    await app.ready();
    // Three routes with two statuses each, for GET and for the HEAD route Fastify adds.
    expect(serializers.pending()).toBe(12);
    const response = await app.inject('/items/2');
    expect(response.statusCode).toBe(200);
    // Serialized by the shared schema the route points at: the property it does not declare is dropped.
    expect(response.body).toBe('{"id":2,"name":"item 2"}');
    expect(serializers.pending()).toBe(11);
  });

  it('compiles the rest once listening, one per event-loop turn, without waiting for requests', async () => {
    const serializers = createLazySerializers();
    app = appWith(serializers);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const seen: number[] = [];
    for (let turn = 0; turn < 40 && serializers.pending() > 0; turn += 1) {
      seen.push(serializers.pending());
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(serializers.pending()).toBe(0);
    // Never several at once: the count went down one at a time.
    for (let i = 1; i < seen.length; i += 1) expect((seen[i - 1] as number) - (seen[i] as number)).toBeLessThanOrEqual(1);
    const { port } = app.server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/items/3`);
    expect(await response.text()).toBe('{"id":3,"name":"item 3"}');
  });

  it('logs a serializer that cannot compile and goes on with the rest; that route answers 500, the others serialize', async () => {
    const serializers = createLazySerializers();
    const lines: { level: number; msg: string }[] = [];
    const stream = { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) };
    app = Fastify({
      logger: { level: 'error', stream },
      schemaController: { compilersFactory: { buildSerializer: serializers.buildSerializer } },
    });
    serializers.compileAfterListen(app);
    app.get('/broken', { schema: { response: { 200: { $ref: 'Nowhere#' } } } }, async () => ({ id: 1 }));
    app.get('/fine', { schema: { response: { 200: Item } } }, async () => ({ id: 1, name: 'one', secret: 'no' }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    for (let turn = 0; turn < 40 && serializers.pending() > 0; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(serializers.pending()).toBe(0);
    expect(lines.filter((line) => line.msg === 'a response serializer failed to compile').length).toBeGreaterThan(0);
    expect((await app.inject('/broken')).statusCode).toBe(500);
    expect((await app.inject('/fine')).body).toBe('{"id":1,"name":"one"}');
  });
});

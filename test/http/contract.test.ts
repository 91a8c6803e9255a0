/** The contract checker that buildTestApp puts around app.inject must catch what it promises to. */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { checkEveryInjectedResponse, checkResponse, ContractViolation, tally } from '../helpers/contract.js';
import type { ObservedResponse } from '../helpers/contract.js';

describe('the contract checker', () => {
  let t: TestApp;
  let doc: unknown;
  let guide: ObservedResponse;
  beforeAll(async () => {
    t = await buildTestApp();
    doc = t.app.swagger();
    const res = await t.app.inject({ url: '/api/v1/guides/reduce-food-waste' });
    guide = { method: 'GET', url: '/api/v1/guides/reduce-food-waste', statusCode: 200, headers: res.headers, rawBody: res.rawPayload };
  });
  afterAll(() => t.close());

  const withBody = (response: ObservedResponse, body: unknown): ObservedResponse => ({
    ...response,
    rawBody: Buffer.from(JSON.stringify(body)),
  });
  const expectViolation = (response: ObservedResponse, message: RegExp) => {
    expect(() => checkResponse(doc, response)).toThrow(ContractViolation);
    expect(() => checkResponse(doc, response)).toThrow(message);
  };

  it('accepts a real response and reports it as checked against its operation', () => {
    expect(checkResponse(doc, guide)).toEqual({ kind: 'operation', key: 'GET /api/v1/guides/{slug} 200' });
  });

  it('refuses a field the document does not declare', () => {
    expectViolation(withBody(guide, { ...JSON.parse(guide.rawBody.toString()), internalId: 7 }), /additionalProperties/);
  });

  it('refuses a missing required field and a wrong type', () => {
    const rest = JSON.parse(guide.rawBody.toString()) as Record<string, unknown>;
    delete rest.markdown;
    expectViolation(withBody(guide, rest), /markdown/);
    expectViolation(withBody(guide, { ...rest, markdown: '', wordCount: '749' }), /integer/);
  });

  it('refuses a format violation (formats are on)', () => {
    expectViolation(withBody(guide, { ...JSON.parse(guide.rawBody.toString()), publishedAt: '20 January 2026' }), /date-time/);
  });

  it('refuses a status the operation does not declare', () => {
    expectViolation({ ...guide, statusCode: 418 }, /status 418 is not declared/);
    expectViolation({ ...guide, url: '/api/v1/product', statusCode: 404 }, /status 404 is not declared for GET \/api\/v1\/product/);
  });

  it('refuses an undeclared media type, and a body where none is declared', () => {
    expectViolation({ ...guide, headers: { ...guide.headers, 'content-type': 'text/html' } }, /media type text\/html/);
    expectViolation({ ...guide, statusCode: 304 }, /declares no body for 304/);
  });

  it('refuses a declared header whose value is outside its schema', () => {
    expectViolation({ ...guide, headers: { ...guide.headers, etag: 'W/"weak"' } }, /header ETag/);
    expectViolation({ ...guide, headers: { ...guide.headers, 'cache-control': 'private' } }, /header Cache-Control/);
  });

  it('decompresses before validating', () => {
    const body = guide.rawBody;
    expect(checkResponse(doc, { ...guide, headers: { ...guide.headers, 'content-encoding': 'gzip' }, rawBody: gzipSync(body) }).kind).toBe(
      'operation',
    );
    const extra = Buffer.from(JSON.stringify({ ...JSON.parse(body.toString()), extra: true }));
    expectViolation(
      { ...guide, headers: { ...guide.headers, 'content-encoding': 'gzip' }, rawBody: gzipSync(extra) },
      /additionalProperties/,
    );
  });

  it('checks problems on undocumented paths against components.schemas.Problem', async () => {
    const res = await t.app.inject({ url: '/nowhere' });
    const response: ObservedResponse = { method: 'GET', url: '/nowhere', statusCode: 404, headers: res.headers, rawBody: res.rawPayload };
    expect(checkResponse(doc, response).kind).toBe('problemComponent');
    expectViolation(withBody(response, { ...res.json<Record<string, unknown>>(), stack: 'Error at …' }), /additionalProperties/);
  });

  it('counts what the document does not describe without checking it', () => {
    expect(
      checkResponse(doc, { method: 'OPTIONS', url: '/api/v1/guides', statusCode: 204, headers: {}, rawBody: Buffer.alloc(0) }).kind,
    ).toBe('notDescribed');
    expect(
      checkResponse(doc, {
        method: 'GET',
        url: '/healthz',
        statusCode: 200,
        headers: { 'content-type': 'application/json' },
        rawBody: Buffer.from('{}'),
      }).kind,
    ).toBe('notDescribed');
  });

  it('makes a wrapped inject reject when the response breaks the contract, and counts the ones that pass', async () => {
    const res = await t.app.inject({ url: '/api/v1/guides?limit=2' });
    let statusCode = 200;
    const app = {
      // Stands in for app.inject: the real response, with the status under test.
      inject: async () => ({
        ...res,
        statusCode,
        headers: res.headers,
        rawPayload: res.rawPayload,
        raw: { req: { method: 'GET', url: '/api/v1/guides?limit=2' } },
      }),
      swagger: () => doc,
    };
    checkEveryInjectedResponse(app);
    const before = tally.operation;
    await expect(app.inject()).resolves.toBeTruthy();
    await expect((app.inject as (options: unknown) => Promise<unknown>)({ url: '/api/v1/guides?limit=2' })).resolves.toMatchObject({
      statusCode: 200,
    });
    expect(tally.operation).toBe(before + 1);
    statusCode = 201;
    await expect((app.inject as (options: unknown) => Promise<unknown>)({ url: '/api/v1/guides?limit=2' })).rejects.toThrow(
      /status 201 is not declared/,
    );
  });
});

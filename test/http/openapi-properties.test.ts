/**
 * The whole API against its own OpenAPI document, property-based (fast-check), on both backends.
 * For every operation of /openapi.json, requests are generated from what the document says:
 * parameter values from each parameter's schema (valid ones, and ones that break its type, range,
 * length or pattern), unknown and repeated parameters, every method (those the 405's `Allow`
 * declares, and others, with and without bodies of any content type), and random Accept headers.
 * Each answer is held to what the document promises for that request: its status (200 for a valid
 * request, 400 naming each bad parameter, 404 for an unknown slug, 405 with the declared `Allow`
 * for any other method, decided before the body), its media type, and, through the contract
 * checker around every injected response (test/helpers/contract.ts), its body and headers.
 *
 * test/fuzz/http-fuzz.test.ts complements this with hostile text, raw sockets and leaks of
 * unpublished guides; this file is the document as an oracle.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { buildTestApp, TEST_BASE_URL } from '../helpers/build-test-app.js';
import type { TestApp } from '../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';
import type { TestDatabase } from '../helpers/postgres-database.js';

const hasPostgres = await requirePostgres('the OpenAPI property tests on PostgreSQL');

/** Generated requests per operation and backend: the whole file stays well under 20 s. */
const RUNS_PER_OPERATION = 120;

interface Schema {
  type?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  pattern?: string;
  default?: unknown;
  enum?: string[];
}
interface Parameter {
  name: string;
  in: 'query' | 'path';
  required?: boolean;
  schema: Schema;
}
interface Response {
  headers?: Record<string, { schema: Schema }>;
  content?: Record<string, unknown>;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, { get?: Operation }>;
}

/** One generated request and what the document says its answer must be. */
interface Case {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The status, and the problem type (its last path segment) with the parameters it must name. */
  expected: { status: number; problem?: string; invalid?: string[] };
  /** The page size the answer may not exceed (list operations). */
  limit?: number;
}

const env = {
  CURSOR_SECRET: 'openapi-properties-cursor-secret-0123456789',
  RATE_LIMIT_PER_MINUTE: '1000000',
  SEARCH_CONCURRENCY: '0',
};

const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'QUERY', 'TRACE', 'PROPFIND', 'SEARCH'];
const BODIES: [string | undefined, string][] = [
  ['application/json', '{x}'],
  ['application/json', '{"__proto__":{"polluted":true},"a":1}'],
  ['application/json', '{"q":"menu"}'],
  ['application/x-www-form-urlencoded', 'q=menu&limit=2'],
  ['text/plain', 'hello'],
  ['foo/bar', '\u0000\u0001binary'],
  [undefined, 'no content type'],
  ['application/json', 'x'.repeat(300_000)],
];
const ACCEPTS = [
  'application/json',
  '*/*',
  'text/html',
  'application/xml',
  'application/problem+json',
  'application/*',
  'text/*;q=0.1',
  'nonsense',
  '',
];

function encodePair(name: string, value: string): string {
  return `${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
}

/** Valid values of a query parameter, from its schema; `cursors`: ones the API issued for this operation. */
function validValue(parameter: Parameter, cursors: string[]): fc.Arbitrary<string> {
  const { schema } = parameter;
  if (schema.type === 'integer') return fc.integer({ min: schema.minimum ?? 0, max: schema.maximum ?? 1000 }).map(String);
  if (parameter.name === 'cursor') return fc.constantFrom(...cursors);
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u');
  return fc
    .oneof(
      fc.constantFrom('menu', 'food safety', 'kitchen staff', '"food waste"', 'café', 'allerg', 'zzzz', '', '   '),
      fc.string({ unit: 'grapheme', maxLength: 40 }),
    )
    .filter((value) => value.length <= (schema.maxLength ?? Infinity) && (pattern === undefined || pattern.test(value)));
}

/** Values that break a query parameter's schema (type, range, length, pattern), or undefined when nothing can. */
function invalidValue(parameter: Parameter): fc.Arbitrary<string> | undefined {
  const { schema } = parameter;
  if (schema.type === 'integer') {
    return fc.oneof(
      fc.integer({ min: -1000, max: (schema.minimum ?? 0) - 1 }).map(String),
      fc.integer({ min: (schema.maximum ?? 1000) + 1, max: 1_000_000 }).map(String),
      fc.constantFrom('abc', '1.5', '1e1', '0x10', 'NaN', '', ' 2', '٣'),
    );
  }
  const tooLong =
    schema.maxLength === undefined ? [] : [fc.integer({ min: schema.maxLength + 1, max: schema.maxLength + 50 }).map((n) => 'a'.repeat(n))];
  const broken =
    schema.pattern === undefined
      ? []
      : [
          fc
            .tuple(fc.string({ maxLength: 5 }), fc.constantFrom('\t', '\n', '\r', '\u0000', '\u001f', '\u007f'))
            .map(([text, control]) => `${text}${control}${text}`),
        ];
  const choices = [...tooLong, ...broken];
  return choices.length === 0 ? undefined : fc.oneof(...choices);
}

/** The cases of one operation: a valid or invalid request, or any request with another method. */
function casesFor(
  template: string,
  operation: Operation,
  allowed: string[],
  inputs: { slugs: string[]; cursors: string[] },
): fc.Arbitrary<Case> {
  const query = (operation.parameters ?? []).filter((p) => p.in === 'query');
  const accepted = query.map((p) => p.name);
  const limitParameter = query.find((p) => p.schema.type === 'integer');
  const hasPath = template.includes('{');

  const slug = hasPath
    ? fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...inputs.slugs).map((value) => ({ value, found: true, wellFormed: true })) },
        {
          weight: 1,
          arbitrary: fc
            .stringMatching(/^[a-z0-9]{1,12}(?:-[a-z0-9]{1,12}){0,3}$/)
            .filter((s) => !inputs.slugs.includes(s))
            .map((value) => ({ value, found: false, wellFormed: true })),
        },
        // Not a slug at all: the document gives a malformed slug the same 404, whatever the query.
        {
          weight: 1,
          arbitrary: fc
            .constantFrom('Upper-Case', 'two--hyphens', '-edge', 'a_b', 'é', 'x'.repeat(101), '%20')
            .map((value) => ({ value, found: false, wellFormed: false })),
        },
      )
    : fc.constant({ value: '', found: true, wellFormed: true });

  // Each accepted parameter: absent, valid or invalid; plus unknown and repeated ones.
  const parameterChoices = query.map((parameter) => {
    const invalid = invalidValue(parameter);
    type Choice = { name: string; value?: string; bad: boolean; forged?: boolean };
    const options: fc.WeightedArbitrary<Choice>[] = [
      { weight: 3, arbitrary: fc.constant({ name: parameter.name, bad: false }) },
      { weight: 3, arbitrary: validValue(parameter, inputs.cursors).map((value) => ({ name: parameter.name, value, bad: false })) },
    ];
    if (invalid) options.push({ weight: 1, arbitrary: invalid.map((value) => ({ name: parameter.name, value, bad: true })) });
    // Any string fits a cursor's schema; one the API did not sign is the document's invalid-cursor.
    if (parameter.name === 'cursor') {
      options.push({
        weight: 1,
        arbitrary: fc
          .stringMatching(/^[A-Za-z0-9_-]{1,40}(?:\.[A-Za-z0-9_-]{1,30})?$/)
          .map((value) => ({ name: parameter.name, value, bad: false, forged: true })),
      });
    }
    return fc.oneof(...options);
  });
  const unknownNames = fc.oneof(
    { weight: 4, arbitrary: fc.constant([]) },
    {
      weight: 1,
      arbitrary: fc.array(
        fc.stringMatching(/^[a-zA-Z$_.\u0400-\u044f]{1,10}$/).filter((name) => !accepted.includes(name)),
        { minLength: 1, maxLength: 2 },
      ),
    },
  );
  const repeated =
    accepted.length === 0
      ? fc.constant(undefined)
      : fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...accepted) });

  const request = fc.record({
    slug,
    parameters: fc.tuple(...parameterChoices),
    unknown: unknownNames,
    repeated,
    accept: fc.constantFrom(...ACCEPTS),
    method: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('GET', 'HEAD') },
      { weight: 2, arbitrary: fc.constantFrom(...OTHER_METHODS, 'OPTIONS') },
    ),
    body: fc.option(fc.constantFrom(...BODIES), { freq: 2 }),
  });

  return request.map(({ slug: path, parameters, unknown, repeated: twice, accept, method, body }): Case => {
    const pairs: string[] = [];
    const invalid: string[] = [];
    let forgedCursor = false;
    for (const { name, value, bad, forged } of parameters) {
      if (value === undefined) continue;
      pairs.push(encodePair(name, value));
      if (bad) invalid.push(name);
      if (forged) forgedCursor = true;
    }
    const values = Object.fromEntries(parameters.filter((p) => p.value !== undefined).map((p) => [p.name, p.value as string]));
    for (const name of unknown) {
      pairs.push(encodePair(name, '1'));
      invalid.push(name);
    }
    if (twice !== undefined) {
      pairs.push(encodePair(twice, values[twice] ?? '1'), encodePair(twice, '2'));
      if (!invalid.includes(twice)) invalid.push(twice);
    }
    const pathname = hasPath ? template.replace(/\{[^}]+\}/, encodeURIComponent(path.value)) : template;
    const url = pairs.length === 0 ? pathname : `${pathname}?${pairs.join('&')}`;
    const headers: Record<string, string> = accept === '' ? {} : { accept };
    if (body?.[0] !== undefined) headers['content-type'] = body[0];
    const limit = limitParameter === undefined ? undefined : Number(values[limitParameter.name] ?? limitParameter.schema.default);

    let expected: Case['expected'];
    if (!allowed.includes(method)) expected = { status: 405 };
    else if (method === 'OPTIONS') expected = { status: 204 };
    else if (!path.wellFormed) expected = { status: 404 };
    else if (invalid.length > 0) expected = { status: 400, problem: 'invalid-parameter', invalid };
    else if (forgedCursor) expected = { status: 400, problem: 'invalid-cursor' };
    // The cursors given are a list's: with a search text, they continue another walk.
    else if (values.cursor !== undefined && (values.q ?? '').trim() !== '') expected = { status: 400, problem: 'invalid-cursor' };
    else expected = path.found ? { status: 200 } : { status: 404 };
    return { method, url, headers, ...(body ? { body: body[1] } : {}), expected, ...(limit === undefined ? {} : { limit }) };
  });
}

describe.each([
  { backend: 'SQLite', enabled: true },
  { backend: 'PostgreSQL', enabled: hasPostgres },
])('every operation of /openapi.json, generated requests, on $backend', ({ backend, enabled }) => {
  let t: TestApp;
  let database: TestDatabase | undefined;
  let document: Document;
  let allowed: string[];
  const inputs = { slugs: [] as string[], cursors: [] as string[] };
  const statuses = new Map<string, number>();

  beforeAll(async () => {
    if (!enabled) return;
    if (backend === 'PostgreSQL') {
      database = await createTestDatabase();
      t = await buildTestApp({ env, store: createPostgresGuideStore({ connectionString: database.url, poolSize: 4 }) });
    } else {
      t = await buildTestApp({ env });
    }
    document = (await t.app.inject({ url: '/openapi.json' })).json<Document>();
    // The methods every operation answers, as its 405 response declares them in Allow.
    const allow = document.paths['/api/v1/guides']!.get!.responses['405']!.headers!.Allow!.schema.enum![0]!;
    allowed = allow.split(', ');
    const firstPage = (await t.app.inject({ url: '/api/v1/guides?limit=50' })).json<{ items: { slug: string }[] }>();
    inputs.slugs = firstPage.items.map((item) => item.slug);
    for (const limit of [1, 2, 3]) {
      const page = (await t.app.inject({ url: `/api/v1/guides?limit=${limit}` })).json<{ nextCursor?: string }>();
      if (page.nextCursor) inputs.cursors.push(page.nextCursor);
    }
    expect(inputs.slugs.length).toBeGreaterThan(3);
    expect(inputs.cursors.length).toBe(3);
  });

  afterAll(async () => {
    if (statuses.size > 0) console.log(`[openapi-properties ${backend}] ${[...statuses].map(([k, n]) => `${k}×${n}`).join(' ')}`);
    await t?.close();
    await database?.drop();
  });

  it.runIf(enabled)(
    'answers each as the document says: status, Allow, media type, problem, body',
    async () => {
      for (const [template, item] of Object.entries(document.paths)) {
        const operation = item.get;
        // POST /mcp speaks JSON-RPC: test/http/routes/mcp-http.test.ts checks it against the document.
        if (operation === undefined) continue;
        await fc.assert(
          fc.asyncProperty(casesFor(template, operation, allowed, inputs), async (request) => {
            const res = await t.app.inject({
              method: request.method as 'GET',
              url: request.url,
              headers: request.headers,
              ...(request.body === undefined ? {} : { payload: request.body }),
            });
            const key = `${operation.operationId} ${request.method === 'GET' || request.method === 'HEAD' ? request.method : 'other'} ${res.statusCode}${request.expected.problem ? ` ${request.expected.problem}` : ''}`;
            statuses.set(key, (statuses.get(key) ?? 0) + 1);
            const where = `${request.method} ${request.url} ${JSON.stringify(request.headers)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
            expect(res.statusCode, where).toBe(request.expected.status);
            const type = String(res.headers['content-type'] ?? '');
            if (res.statusCode === 405) expect(res.headers.allow, where).toBe(allowed.join(', '));
            if (res.statusCode === 204) expect(res.headers.allow, where).toBe(allowed.join(', '));
            if (res.statusCode >= 400) {
              expect(type, where).toBe('application/problem+json; charset=utf-8');
              const declared = operation.responses[String(res.statusCode)]?.content ?? {};
              expect(Object.keys(declared), where).toEqual(['application/problem+json']);
              if (request.method === 'HEAD') return;
              const problem = res.json<{ status: number; type: string; errors?: { name: string }[] }>();
              expect(problem.status, where).toBe(res.statusCode);
              if (request.expected.problem) expect(problem.type, where).toBe(`${TEST_BASE_URL}/problems/${request.expected.problem}`);
              const named = (problem.errors ?? []).map((error) => error.name);
              for (const name of request.expected.invalid ?? []) expect(named, where).toContain(name);
            } else if (res.statusCode === 200) {
              const declared = Object.keys(operation.responses['200']!.content ?? {});
              expect(
                declared.map((media) => `${media}; charset=utf-8`),
                where,
              ).toContain(type);
              expect(res.headers.etag, where).toMatch(/^"[^"]+"$/);
              if (request.method === 'HEAD') expect(res.body, where).toBe('');
              else if (request.limit !== undefined)
                expect(res.json<{ items: unknown[] }>().items.length, where).toBeLessThanOrEqual(request.limit);
            }
          }),
          { numRuns: RUNS_PER_OPERATION },
        );
      }
    },
    60_000,
  );
});

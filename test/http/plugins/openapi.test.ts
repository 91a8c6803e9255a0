import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { checkResponse } from '../../helpers/contract.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');

interface Example {
  summary: string;
  value: unknown;
}
interface MediaType {
  schema: { $ref?: string } & Record<string, unknown>;
  examples?: Record<string, Example>;
}
interface Header {
  schema: Record<string, unknown>;
  description?: string;
}
interface Response {
  description: string;
  headers?: Record<string, Header>;
  content?: Record<string, MediaType>;
}
interface Parameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema: Record<string, unknown>;
  example?: unknown;
}
interface Operation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: Parameter[];
  responses: Record<string, Response>;
}
interface Document {
  openapi: string;
  info: Record<string, unknown>;
  servers: Array<{ url: string }>;
  tags: Array<{ name: string }>;
  paths: Record<string, { get: Operation } & Record<string, unknown>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

const OPERATIONS = {
  getRoot: '/',
  getProduct: '/api/v1/product',
  listGuides: '/api/v1/guides',
  getGuide: '/api/v1/guides/{slug}',
  getGuideMarkdown: '/api/v1/guides/{slug}.md',
  listResources: '/api/v1/resources',
  getLlmsFullTxt: '/llms-full.txt',
} as const;
const LOOKUPS: readonly string[] = ['getGuide', 'getGuideMarkdown'];

const EVERY_STATUS = ['200', '304', '400', '405', '414', '429', '431', '500', '503'];

describe('/openapi.json', () => {
  let t: TestApp;
  let doc: Document;
  beforeAll(async () => {
    t = await buildTestApp();
    const res = await t.app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json<Document>();
    // Kept as a test artifact: what Spectral and the validator saw.
    mkdirSync(path.join(ROOT, 'test-artifacts'), { recursive: true });
    writeFileSync(path.join(ROOT, 'test-artifacts', 'openapi.json'), `${JSON.stringify(doc, null, 2)}\n`);
  });
  afterAll(() => t.close());

  const operation = (id: keyof typeof OPERATIONS): Operation => doc.paths[OPERATIONS[id]]!.get;

  it('is OpenAPI 3.1 for PUBLIC_BASE_URL, with contact, license and terms from the content', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: TEST_BASE_URL, description: 'This deployment (PUBLIC_BASE_URL)' }]);
    expect(doc.info).toMatchObject({
      title: 'Restaurant Guides API',
      summary: 'Practical guides for running a restaurant, from food safety and allergens to menu costing, staffing and service.',
      contact: { name: 'Restaurant Guides editorial team', url: 'https://guides.example.com/contact', email: 'api@guides.example.com' },
      license: { name: 'CC BY 4.0', url: 'https://creativecommons.org/licenses/by/4.0/' },
      termsOfService: 'https://guides.example.com/terms',
    });
    expect(doc.tags.map((tag) => tag.name)).toEqual(['guides', 'mcp', 'product', 'resources']);
  });

  it('describes exactly the seven read operations and POST /mcp, each with operationId, summary, description and a defined tag', () => {
    const operations = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((method) => `${method} ${p}`));
    expect(operations.sort()).toEqual([...Object.values(OPERATIONS).map((p) => `get ${p}`), 'post /mcp'].sort());
    const mcp = (doc.paths['/mcp'] as unknown as { post: Operation & { requestBody: { content: Record<string, unknown> } } }).post;
    expect(mcp).toMatchObject({ operationId: 'mcp', tags: ['mcp'] });
    expect(Object.keys(mcp.requestBody.content)).toEqual(['application/json']);
    expect(Object.keys(mcp.responses).sort()).toEqual(['200', '202', '400', '403', '404', '405', '406', '413', '415', '429', '500', '503']);
    for (const [id, p] of Object.entries(OPERATIONS)) {
      const op = doc.paths[p]!.get;
      expect(op.operationId).toBe(id);
      expect(op.summary.length).toBeGreaterThan(5);
      expect(op.description.length).toBeGreaterThan(20);
      expect(op.tags.length).toBe(1);
      expect(doc.tags.map((tag) => tag.name)).toContain(op.tags[0]);
    }
  });

  it('states every parameter constraint: limit 1–50, q at most 200 characters, the slug pattern', () => {
    const params = Object.fromEntries((operation('listGuides').parameters ?? []).map((p) => [p.name, p]));
    expect(Object.keys(params).sort()).toEqual(['cursor', 'limit', 'q']);
    expect(params.limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 50, default: 20 } });
    expect(params.q).toMatchObject({ in: 'query', required: false, schema: { type: 'string', maxLength: 200 } });
    expect(params.q!.schema.pattern).toBe('^[^\\u0000-\\u001F\\u007F]*$');
    expect(params.cursor).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
    for (const p of Object.values(params)) expect(p.description).toBeTruthy();

    for (const id of ['getGuide', 'getGuideMarkdown'] as const) {
      const [slug] = operation(id).parameters ?? [];
      expect(slug).toMatchObject({
        name: 'slug',
        in: 'path',
        required: true,
        schema: { type: 'string', pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$', maxLength: 100 },
      });
    }
    for (const id of ['getRoot', 'getProduct', 'listResources', 'getLlmsFullTxt'] as const)
      expect(operation(id).parameters, id).toBeUndefined();
  });

  it('declares every response the API can give, 404 where something is looked up', () => {
    for (const id of Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[]) {
      const expected = LOOKUPS.includes(id) ? [...EVERY_STATUS, '404'] : EVERY_STATUS;
      expect(Object.keys(operation(id).responses).sort(), id).toEqual([...expected].sort());
      for (const [status, response] of Object.entries(operation(id).responses)) {
        expect(response.description.length, `${id} ${status}`).toBeGreaterThan(10);
      }
    }
  });

  it('declares the headers of each response: validators, caching, Link, rate limits, Retry-After, Allow', () => {
    const names = (id: keyof typeof OPERATIONS, status: string): string[] =>
      Object.keys(operation(id).responses[status]!.headers ?? {}).sort();
    const everyResponse = ['RateLimit', 'RateLimit-Policy', 'X-Request-Id'];
    const cacheable = ['Cache-Control', 'ETag', 'Vary', ...everyResponse];
    for (const id of ['getRoot', 'getProduct', 'listResources', 'getLlmsFullTxt'] as const)
      expect(names(id, '200'), id).toEqual([...cacheable].sort());
    expect(names('listGuides', '200')).toEqual([...cacheable, 'Link'].sort());
    for (const id of LOOKUPS as (keyof typeof OPERATIONS)[]) {
      expect(names(id, '200'), id).toEqual([...cacheable, 'Last-Modified', 'Link', 'X-Markdown-Tokens'].sort());
      expect(names(id, '304'), id).toEqual(names(id, '200'));
      expect(operation(id).responses['200']!.headers!['X-Markdown-Tokens']!.description).toMatch(/estimate/);
    }
    expect(Object.keys(operation('getGuide').responses['200']!.content!)).toEqual(['application/json', 'text/markdown']);
    expect(Object.keys(operation('getGuideMarkdown').responses['200']!.content!)).toEqual(['text/markdown']);
    expect(Object.keys(operation('getLlmsFullTxt').responses['200']!.content!)).toEqual(['text/markdown']);
    expect(names('listGuides', '304')).toEqual(names('listGuides', '200'));
    for (const id of Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[]) {
      expect(names(id, '400')).toEqual(['Cache-Control', ...everyResponse].sort());
      expect(names(id, '405')).toEqual(['Allow', 'Cache-Control', ...everyResponse].sort());
      expect(names(id, '429')).toEqual(['Cache-Control', 'Retry-After', ...everyResponse].sort());
      expect(names(id, '503')).toEqual(['Cache-Control', 'Retry-After', ...everyResponse].sort());
      expect(operation(id).responses['304']!.content).toBeUndefined();
    }
    expect(operation('getGuide').responses['200']!.headers!.ETag!.schema).toMatchObject({ type: 'string', pattern: '^"[A-Za-z0-9_-]+"$' });
    expect(operation('getGuide').responses['503']!.headers!['Retry-After']!.schema).toMatchObject({ type: 'integer', minimum: 0 });
  });

  it('shares the problem schema as components.schemas.Problem and points every error response at it', () => {
    expect(doc.components.schemas.Problem).toMatchObject({
      type: 'object',
      required: ['type', 'title', 'status', 'detail'],
      additionalProperties: false,
    });
    expect(Object.keys(doc.components.schemas).sort()).toEqual([
      'GuideDetail',
      'GuideList',
      'GuideSummary',
      'Problem',
      'Product',
      'ResourceLinks',
    ]);
    for (const id of Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[]) {
      for (const [status, response] of Object.entries(operation(id).responses)) {
        if (Number(status) < 400) continue;
        expect(Object.keys(response.content ?? {}), `${id} ${status}`).toEqual(['application/problem+json']);
        expect(response.content!['application/problem+json']!.schema, `${id} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
      }
    }
  });

  it('names each 200 body: the operations reference GuideList, GuideDetail, Product and ResourceLinks, a list its GuideSummary', () => {
    const bodyOf = (id: keyof typeof OPERATIONS): unknown => operation(id).responses['200']!.content!['application/json']!.schema;
    expect(bodyOf('listGuides')).toEqual({ $ref: '#/components/schemas/GuideList' });
    expect(bodyOf('getGuide')).toEqual({ $ref: '#/components/schemas/GuideDetail' });
    expect(bodyOf('getProduct')).toEqual({ $ref: '#/components/schemas/Product' });
    expect(bodyOf('listResources')).toEqual({ $ref: '#/components/schemas/ResourceLinks' });
    expect(doc.components.schemas.GuideList).toMatchObject({
      properties: { items: { type: 'array', items: { $ref: '#/components/schemas/GuideSummary' } } },
    });
    for (const [name, schema] of Object.entries(doc.components.schemas)) expect(schema.title, name).toBe(name);
  });

  it('declares the API anonymous: security is an empty list at the top level', () => {
    expect((doc as unknown as { security: unknown }).security).toEqual([]);
  });

  it('generates the 200 schemas from the route schemas that serialize the responses (closed objects)', () => {
    const schema = doc.components.schemas.GuideDetail as { properties: Record<string, unknown>; additionalProperties: boolean };
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual([
      'slug',
      'title',
      'summary',
      'tags',
      'language',
      'publishedAt',
      'updatedAt',
      'readingTimeMinutes',
      'url',
      'markdown',
      'wordCount',
      'headings',
      'author',
      'canonicalUrl',
    ]);
  });

  it('gives every response an example, and each fits the schema it illustrates', () => {
    let checked = 0;
    for (const [id, template] of Object.entries(OPERATIONS)) {
      for (const [status, response] of Object.entries(doc.paths[template]!.get.responses)) {
        if (status === '304') continue;
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          const examples = Object.entries(media.examples ?? {});
          expect(examples.length, `${id} ${status}`).toBeGreaterThan(0);
          for (const [name, example] of examples) {
            expect(example.summary, `${id} ${status} ${name}`).toBeTruthy();
            expect(
              () =>
                checkResponse(doc, {
                  method: 'GET',
                  url: template.replace('{slug}', 'reduce-food-waste'),
                  statusCode: Number(status),
                  headers: { 'content-type': mediaType },
                  rawBody: Buffer.from(JSON.stringify(example.value)),
                }),
              `${id} ${status} ${name}`,
            ).not.toThrow();
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(41);
  });

  it('takes its examples from what the API answers for the sample content', async () => {
    const example = (
      id: keyof typeof OPERATIONS,
      status: string,
      name: string,
      mediaType = Number(status) < 400 ? 'application/json' : 'application/problem+json',
    ): Example['value'] => operation(id).responses[status]!.content![mediaType]!.examples![name]!.value;
    const answer = async (url: string, method: 'GET' | 'POST' = 'GET') =>
      (await t.app.inject({ method, url })).json<Record<string, unknown>>();
    const withoutCursor = ({ nextCursor, ...rest }: Record<string, unknown>) => {
      expect(typeof nextCursor).toBe('string');
      return rest;
    };

    expect(example('getRoot', '200', 'sample')).toEqual(await answer('/'));
    expect(example('getProduct', '200', 'sample')).toEqual(await answer('/api/v1/product'));
    expect(example('listResources', '200', 'sample')).toEqual(await answer('/api/v1/resources'));
    expect(withoutCursor(example('listGuides', '200', 'newest') as Record<string, unknown>)).toEqual(
      withoutCursor(await answer('/api/v1/guides?limit=2')),
    );
    // Snippets are still being tuned by the search work: the example must mark the terms as the real one does.
    const snippetless = (page: Record<string, unknown>) => {
      const items = (page.items as Array<Record<string, unknown>>).map(({ snippet, ...item }) => {
        expect(snippet).toMatch(/\*\*food\*\*/i);
        expect(snippet).toMatch(/\*\*waste\*\*/i);
        return item;
      });
      return { ...page, items };
    };
    expect(snippetless(withoutCursor(example('listGuides', '200', 'search') as Record<string, unknown>))).toEqual(
      snippetless(withoutCursor(await answer('/api/v1/guides?q=food%20waste&limit=1'))),
    );

    // The guide example shortens the Markdown and the headings; the rest is the real answer.
    const guide = await answer('/api/v1/guides/reduce-food-waste');
    const { markdown, headings, ...rest } = example('getGuide', '200', 'sample') as { markdown: string; headings: unknown[] };
    expect({ ...guide, markdown: undefined, headings: undefined }).toEqual({ ...rest, markdown: undefined, headings: undefined });
    expect(markdown.endsWith('…')).toBe(true);
    expect((guide.markdown as string).startsWith(markdown.slice(0, -1))).toBe(true);
    expect(guide.headings).toEqual(expect.arrayContaining(headings));
    // The Markdown example is the same guide, its body shortened the same way.
    const markdownExample = example('getGuideMarkdown', '200', 'sample', 'text/markdown') as string;
    expect(markdownExample).toBe(example('getGuide', '200', 'sample', 'text/markdown'));
    expect(markdownExample.endsWith('…')).toBe(true);
    expect((await t.app.inject({ url: '/api/v1/guides/reduce-food-waste.md' })).body.startsWith(markdownExample.slice(0, -1))).toBe(true);

    expect(example('listGuides', '400', 'limitOutOfRange')).toEqual(await answer('/api/v1/guides?limit=51'));
    expect(example('listGuides', '400', 'unknownParameter')).toEqual(await answer('/api/v1/guides?sort=title'));
    expect(example('listGuides', '400', 'invalidCursor')).toEqual(await answer('/api/v1/guides?cursor=not-a-cursor'));
    const { nextCursor } = await answer('/api/v1/guides?q=kitchen&limit=1');
    expect(example('listGuides', '400', 'cursorForAnotherSearch')).toEqual(
      await answer(`/api/v1/guides?q=menu&cursor=${String(nextCursor)}`),
    );
    expect(example('getGuide', '404', 'notFound')).toEqual(await answer('/api/v1/guides/no-such-guide'));
    for (const id of Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[]) {
      expect(example(id, '405', 'methodNotAllowed')).toEqual(await answer(OPERATIONS[id].replace('{slug}', 'reduce-food-waste'), 'POST'));
    }

    const broken = await buildTestApp();
    await broken.store.close();
    try {
      const res = await broken.app.inject({ url: '/api/v1/guides?q=menu' });
      expect(res.statusCode).toBe(503);
      expect(example('listGuides', '503', 'databaseUnreachable')).toEqual(res.json());
    } finally {
      await broken.app.close();
    }
  });

  it('is a valid OpenAPI document according to @readme/openapi-parser', async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result).toMatchObject({ valid: true, specification: 'OpenAPI' });
    expect(result.warnings).toEqual([]);
  });

  it("lints clean with Spectral's OpenAPI ruleset (.spectral.yaml): no error, warning, info or hint", async () => {
    const file = path.join(ROOT, 'test-artifacts', 'openapi.json');
    const require = createRequire(import.meta.url);
    const pkgPath = require.resolve('@stoplight/spectral-cli/package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { bin: Record<string, string> };
    const cli = path.join(path.dirname(pkgPath), pkg.bin.spectral!);
    let output: string;
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        [cli, 'lint', file, '--ruleset', path.join(ROOT, '.spectral.yaml'), '--fail-severity', 'hint'],
        { cwd: ROOT },
      );
      output = `${stdout}${stderr}`;
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`Spectral found problems:\n${stdout}${stderr}`, { cause: error });
    }
    console.log(`Spectral (spectral:oas, all rules) on /openapi.json:\n${output.trim()}`);
    expect(output).toContain("No results with a severity of 'hint' or higher found!");
  });

  it("lints clean with Redocly CLI's recommended rules: no error, no warning", async () => {
    const file = path.join(ROOT, 'test-artifacts', 'openapi.json');
    const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
    // No telemetry and no update check: the test must not call out.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1' };
    // Non-zero exit on any error; the JSON report counts warnings too.
    const { stdout } = await run(process.execPath, [cli, 'lint', file, '--extends', 'recommended', '--format', 'json'], {
      cwd: ROOT,
      env,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('gives clients generated by openapi-typescript a named type for each body and the problem', async () => {
    const file = path.join(ROOT, 'test-artifacts', 'openapi.json');
    const out = path.join(ROOT, 'test-artifacts', 'openapi.d.ts');
    const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('openapi-typescript/package.json')), 'bin', 'cli.js');
    await run(process.execPath, [cli, file, '-o', out], { cwd: ROOT });
    const types = readFileSync(out, 'utf8');
    for (const name of ['GuideSummary', 'GuideDetail', 'GuideList', 'Product', 'ResourceLinks', 'Problem']) {
      expect(types, name).toMatch(new RegExp(`^ {8}${name}: \\{$`, 'm'));
    }
    expect(types).toContain('items: components["schemas"]["GuideSummary"][];');
    expect(types).toContain('"application/json": components["schemas"]["GuideList"];');
    expect(types).toContain('"application/json": components["schemas"]["GuideDetail"];');
  });

  it('is served from the representation cache: strong ETag, 304, HEAD', async () => {
    const first = await t.app.inject({ url: '/openapi.json' });
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await t.app.inject({ url: '/openapi.json', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const head = await t.app.inject({ method: 'HEAD', url: '/openapi.json' });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(first.headers.etag);
  });

  it('follows the content: no contact or license when product.yaml has none, and a new product after an import', async () => {
    const bare = await buildTestApp({ content: makeContent([makeGuide({ slug: 'one' })]) });
    try {
      const before = (await bare.app.inject({ url: '/openapi.json' })).json<Document>();
      expect(before.info.contact).toBeUndefined();
      expect(before.info.license).toBeUndefined();
      expect(before.info.termsOfService).toBeUndefined();
      expect(before.info.summary).toBe('Guides for tests.');
      await bare.importContent(
        makeContent([makeGuide({ slug: 'one' })], {
          product: {
            name: 'Test Guides',
            description: 'Guides for tests.',
            license: { name: 'MIT' },
            contact: { email: 'team@example.org' },
          },
        }),
      );
      const after = (await bare.app.inject({ url: '/openapi.json' })).json<Document>();
      expect(after.info.license).toEqual({ name: 'MIT' });
      expect(after.info.contact).toEqual({ email: 'team@example.org' });
      expect(after.paths).toEqual(before.paths);
    } finally {
      await bare.close();
    }
  });
});

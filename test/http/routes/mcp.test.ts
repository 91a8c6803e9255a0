/**
 * POST /mcp driven by the official MCP client (@modelcontextprotocol/client) over a real socket, in
 * both eras: 2026-07-28 pinned (server/discover, no handshake) and the legacy initialize handshake.
 * The answers are compared with what the REST API gives for the same guides.
 */
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderGuideMarkdown } from '../../../src/http/guide-markdown.js';
import { GuideDetailSchema, GuideListSchema, GuideSummarySchema } from '../../../src/schemas/guide.js';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { markerIn, sampleWithMarkers } from '../../helpers/unpublished-markers.js';

const ERAS = [
  { name: '2026-07-28', mode: { pin: '2026-07-28' } },
  { name: 'legacy (initialize)', mode: 'legacy' },
] as const;

const ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const NOT_FOUND = 'No published guide has this slug. Use search_guides or list_guides to find one.';
const UNPUBLISHED_SLUGS = ['zqxhidden-kitchen-menu', 'plumbagoarchive-food-waste', 'reduce-food-waste-quixotrydraft'];

type Page = { items: Array<{ slug: string } & Record<string, unknown>>; nextCursor?: string };

describe('POST /mcp with the official client', () => {
  let t: TestApp;
  let url: URL;
  /** Every /mcp response the clients saw: status and headers. */
  const seen: Array<{ status: number; headers: Headers; body: string }> = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    seen.push({ status: response.status, headers: response.headers, body: await response.clone().text() });
    return response;
  };

  beforeAll(async () => {
    t = await buildTestApp({ content: await sampleWithMarkers() });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL(`${address}/mcp`);
  });
  afterAll(() => t.close());

  const rest = async <T>(path: string): Promise<T> => {
    const response = await t.app.inject({ url: path });
    expect(response.statusCode, path).toBe(200);
    return response.json<T>();
  };

  describe.each(ERAS)('$name', ({ mode }) => {
    let client: Client;
    let transport: StreamableHTTPClientTransport;
    beforeAll(async () => {
      client = new Client({ name: 'guides-test', version: '1.0.0' }, { versionNegotiation: { mode } });
      transport = new StreamableHTTPClientTransport(url, { fetch: recordingFetch });
      await client.connect(transport);
    });
    afterAll(() => client.close());

    const call = async (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
    const structured = async (name: string, args: Record<string, unknown>): Promise<Page> => {
      const result = await call(name, args);
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      // The same JSON as text, for clients that read only text.
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(result.structuredContent);
      return result.structuredContent as Page;
    };

    it('lists the three tools with their schemas and read-only annotations', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['search_guides', 'list_guides', 'get_guide']);
      for (const tool of tools) {
        expect(tool.annotations).toMatchObject(ANNOTATIONS);
        expect(tool.description!.length).toBeGreaterThan(40);
        expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      }
      const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
      expect(byName.search_guides!.inputSchema).toMatchObject({
        required: ['query'],
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 200 },
          limit: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
          cursor: { type: 'string' },
        },
      });
      expect(Object.keys(byName.list_guides!.inputSchema.properties ?? {})).toEqual(['limit', 'cursor', 'tag', 'language']);
      expect(byName.get_guide!.inputSchema).toMatchObject({ required: ['slug'], properties: { slug: { type: 'string' } } });
      // The output schemas are the REST API's own.
      // The REST schemas, self-contained: the shared GuideSummary inlined where the list refers to it.
      const plain = (schema: unknown): Record<string, unknown> =>
        JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === '$id' ? undefined : value)));
      const list = plain(GuideListSchema) as { properties: { items: { items: unknown } } };
      list.properties.items.items = plain(GuideSummarySchema);
      expect(byName.search_guides!.outputSchema).toEqual(list);
      expect(byName.list_guides!.outputSchema).toEqual(list);
      expect(byName.get_guide!.outputSchema).toEqual(plain(GuideDetailSchema));
    });

    it("search_guides gives the REST search's guides in its order, and the cursors continue each other", async () => {
      for (const query of ['food', 'menu cost', 'kitchen']) {
        const mcpSlugs: string[] = [];
        let page = await structured('search_guides', { query, limit: 2 });
        const first = await rest<Page>(`/api/v1/guides?q=${encodeURIComponent(query)}&limit=2`);
        expect(page).toEqual(first);
        for (;;) {
          mcpSlugs.push(...page.items.map((item) => item.slug));
          if (page.nextCursor === undefined) break;
          // REST continues the MCP walk with the MCP cursor, and the MCP tool gives the same page.
          const restNext = await rest<Page>(`/api/v1/guides?q=${encodeURIComponent(query)}&limit=2&cursor=${page.nextCursor}`);
          page = await structured('search_guides', { query, limit: 2, cursor: page.nextCursor });
          expect(page).toEqual(restNext);
        }
        const all = await rest<Page>(`/api/v1/guides?q=${encodeURIComponent(query)}&limit=50`);
        expect(mcpSlugs, query).toEqual(all.items.map((item) => item.slug));
        expect(mcpSlugs.length, query).toBeGreaterThan(2);
      }
      // The default page is 10 results, with snippets.
      const defaults = await structured('search_guides', { query: 'food' });
      expect(defaults.items.length).toBe(10);
      expect(defaults.items.every((item) => typeof item.snippet === 'string')).toBe(true);
    });

    it('list_guides is the REST list, newest first; tag and language filter it', async () => {
      const page = await structured('list_guides', { limit: 3 });
      expect(page).toEqual(await rest<Page>('/api/v1/guides?limit=3'));
      const next = await structured('list_guides', { limit: 3, cursor: page.nextCursor });
      expect(next).toEqual(await rest<Page>(`/api/v1/guides?limit=3&cursor=${page.nextCursor!}`));

      const everything = await rest<Page>('/api/v1/guides?limit=50');
      const tag = String((everything.items[0]!.tags as string[])[0]);
      const tagged = everything.items.filter((item) => (item.tags as string[]).includes(tag)).map((item) => item.slug);
      const walked: string[] = [];
      let cursor: string | undefined;
      do {
        const filtered = await structured('list_guides', { limit: 2, tag: tag.toUpperCase(), ...(cursor ? { cursor } : {}) });
        walked.push(...filtered.items.map((item) => item.slug));
        cursor = filtered.nextCursor;
      } while (cursor !== undefined);
      expect(walked).toEqual(tagged);
      expect((await structured('list_guides', { language: 'EN', limit: 50 })).items.length).toBe(everything.items.length);
      expect((await structured('list_guides', { language: 'fr' })).items).toEqual([]);
    });

    it('get_guide gives the REST detail; every unpublished, unknown or malformed slug the same isError result', async () => {
      const guide = await structured('get_guide', { slug: 'reduce-food-waste' });
      expect(guide).toEqual(await rest('/api/v1/guides/reduce-food-waste'));
      const answers = [];
      for (const slug of [...UNPUBLISHED_SLUGS, 'no-such-guide', 'Not A Slug', '../etc/passwd', '']) {
        const result = await call('get_guide', { slug });
        expect(result.structuredContent, slug).toBeUndefined();
        answers.push(result);
      }
      for (const answer of answers) expect(answer).toEqual({ ...answers[0], _meta: answer._meta });
      expect(answers[0]).toMatchObject({ isError: true, content: [{ type: 'text', text: NOT_FOUND }] });
    });

    it('answers bad arguments and foreign cursors with isError results, never a protocol error', async () => {
      const bad = [
        ['search_guides', { query: '' }],
        ['search_guides', { query: 'x'.repeat(201) }],
        ['search_guides', { query: 'food', limit: 51 }],
        ['search_guides', { query: 'food', unknown: 1 }],
        ['search_guides', { query: 'food', cursor: 'not-a-cursor' }],
        ['list_guides', { limit: 0 }],
        ['get_guide', {}],
      ] as const;
      for (const [name, args] of bad) {
        const result = await call(name, args);
        expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
        expect(result.structuredContent).toBeUndefined();
      }
      // A search cursor continues that search only, and a list cursor no search.
      const { nextCursor } = await structured('search_guides', { query: 'kitchen', limit: 1 });
      expect((await call('search_guides', { query: 'menu', cursor: nextCursor })).isError).toBe(true);
      expect((await call('list_guides', { cursor: nextCursor })).isError).toBe(true);
    });

    it('lists every published guide as a Markdown resource and a template; reads give its Markdown', async () => {
      const { resources } = await client.listResources();
      const published = await rest<Page>('/api/v1/guides?limit=50');
      expect(resources.map((resource) => resource.uri)).toEqual(
        published.items.map((item) => `${TEST_BASE_URL}/api/v1/guides/${item.slug}.md`),
      );
      expect(resources[0]).toMatchObject({ mimeType: 'text/markdown', name: published.items[0]!.slug, title: published.items[0]!.title });
      expect(markerIn(JSON.stringify(resources))).toBeUndefined();

      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates).toMatchObject([{ uriTemplate: `${TEST_BASE_URL}/api/v1/guides/{slug}.md`, mimeType: 'text/markdown' }]);

      const read = await client.readResource({ uri: `${TEST_BASE_URL}/api/v1/guides/reduce-food-waste.md` });
      const guide = await t.store.getPublishedGuide('reduce-food-waste');
      expect(read.contents).toEqual([
        {
          uri: `${TEST_BASE_URL}/api/v1/guides/reduce-food-waste.md`,
          mimeType: 'text/markdown',
          text: renderGuideMarkdown(guide!, `${TEST_BASE_URL}/api/v1/guides/reduce-food-waste`),
        },
      ]);
      expect(String((read.contents[0] as { text: string }).text)).toMatch(/^---\ntitle: "Reduce Food Waste/);
    });

    it('reading an unpublished or unknown guide is the same -32602 error', async () => {
      const errors: Array<{ code: number; message: string }> = [];
      for (const slug of [...UNPUBLISHED_SLUGS, 'no-such-guide', 'Not_A_Slug']) {
        const error = await client.readResource({ uri: `${TEST_BASE_URL}/api/v1/guides/${slug}.md` }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, slug).toBeInstanceOf(ProtocolError);
        errors.push({ code: (error as ProtocolError).code, message: (error as ProtocolError).message });
      }
      expect(new Set(errors.map((e) => JSON.stringify(e))).size).toBe(1);
      expect(errors[0]!.code).toBe(-32602);
    });

    it('never sends an Mcp-Session-Id nor an unpublished guide; every response has a request id and rate-limit headers', () => {
      expect(transport.sessionId).toBeUndefined();
      expect(seen.length).toBeGreaterThan(10);
      for (const response of seen) {
        expect(response.headers.get('mcp-session-id')).toBeNull();
        expect(response.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
        expect(response.headers.get('ratelimit')).toMatch(/^"per-ip";r=\d+;t=\d+$/);
        expect(response.headers.get('etag')).toBeNull();
        // Past the URI a -32602 error echoes back (the one the client asked for), nothing names an unpublished guide.
        expect(markerIn(response.body.replace(/"data":\{"uri":"[^"]*"\}/g, ''))).toBeUndefined();
      }
    });
  });

  it('2026-07-28 list results carry ttlMs and cacheScope "public"', async () => {
    const client = new Client({ name: 'guides-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      for (const result of [
        await client.listTools(),
        await client.listResources(),
        await client.listResourceTemplates(),
        await client.readResource({ uri: `${TEST_BASE_URL}/api/v1/guides/reduce-food-waste.md` }),
      ]) {
        expect(result).toMatchObject({ cacheScope: 'public', ttlMs: expect.any(Number) as number });
        expect((result as unknown as { ttlMs: number }).ttlMs).toBeGreaterThan(0);
      }
    } finally {
      await client.close();
    }
  });
});

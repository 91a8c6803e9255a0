/**
 * The MCP tools on PostgreSQL, whose store renders no search page itself (the tools then render it
 * as REST does): search and list equal the REST pages of the same app, cursors cross between them,
 * and unpublished guides get the one not-found result.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresGuideStore } from '../../../src/store/postgres/postgres-guide-store.js';
import { buildTestApp } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../../helpers/postgres-database.js';
import type { TestDatabase } from '../../helpers/postgres-database.js';
import { sampleWithMarkers } from '../../helpers/unpublished-markers.js';

const hasPostgres = await requirePostgres('the MCP tests on PostgreSQL');

type Page = { items: Array<{ slug: string }>; nextCursor?: string };

describe.runIf(hasPostgres)('MCP tools on PostgreSQL', () => {
  let database: TestDatabase;
  let t: TestApp;
  let client: Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    t = await buildTestApp({
      content: await sampleWithMarkers(),
      env: { SEARCH_MAX_LAG_MS: '0' },
      store: createPostgresGuideStore({ connectionString: database.url, poolSize: 4 }),
    });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    client = new Client({ name: 'guides-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${address}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
    await database?.drop();
  });

  const rest = async (path: string): Promise<Page> => (await t.app.inject({ url: path })).json<Page>();
  const tool = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })).structuredContent as Page;

  it('search_guides and list_guides give the REST pages, and their cursors continue REST walks', async () => {
    for (const query of ['food', 'kitchen staff']) {
      const first = await tool('search_guides', { query, limit: 3 });
      expect(first).toEqual(await rest(`/api/v1/guides?q=${encodeURIComponent(query)}&limit=3`));
      expect(first.nextCursor).toBeDefined();
      expect(await tool('search_guides', { query, limit: 3, cursor: first.nextCursor })).toEqual(
        await rest(`/api/v1/guides?q=${encodeURIComponent(query)}&limit=3&cursor=${first.nextCursor!}`),
      );
    }
    const list = await tool('list_guides', { limit: 4 });
    expect(list).toEqual(await rest('/api/v1/guides?limit=4'));
  });

  it('answers every unpublished slug as an unknown one', async () => {
    const texts = [];
    for (const slug of ['zqxhidden-kitchen-menu', 'plumbagoarchive-food-waste', 'no-such-guide']) {
      const result = await client.callTool({ name: 'get_guide', arguments: { slug } });
      expect(result.isError).toBe(true);
      texts.push(JSON.stringify(result.content));
    }
    expect(new Set(texts).size).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_TYPES } from '../../../src/http/problems.js';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';
import { loadSampleContent } from '../../helpers/sample-content.js';

interface Link {
  rel: string;
  href: string;
  type?: string;
  title: string;
}
interface LinkTarget {
  href: string;
  type?: string;
  title?: string;
}
interface Catalog {
  linkset: Array<{ anchor: string } & Record<string, string | LinkTarget[]>>;
}

describe('discovery for agents', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  describe('GET /llms.txt', () => {
    it('is Markdown: product, what the API does, links to the OpenAPI document and docs, then every published guide', async () => {
      const res = await t.app.inject({ url: '/llms.txt' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
      const text = res.body;
      expect(
        text.startsWith(
          '# Restaurant Guides\n\n> Practical guides for running a restaurant, from food safety and allergens to menu costing, staffing and service.\n\n',
        ),
      ).toBe(true);
      // Three lines on what the API does, right after the summary.
      const intro = text.split('\n\n')[2]!.split('\n');
      expect(intro).toHaveLength(3);
      expect(intro[1]).toContain(`${TEST_BASE_URL}/api/v1/guides?q=`);
      expect(text).toContain(`- [OpenAPI definition](${TEST_BASE_URL}/openapi.json): `);
      expect(text).toContain(`- [API reference](${TEST_BASE_URL}/docs): `);
      expect(text).toContain(`- [API catalog](${TEST_BASE_URL}/.well-known/api-catalog): `);
      expect(text).toContain(`- [MCP server](${TEST_BASE_URL}/mcp): `);
      expect(text).toContain(`- [All guides as Markdown](${TEST_BASE_URL}/llms-full.txt): `);

      const sample = await loadSampleContent();
      const published = sample.guides.filter((guide) => guide.status === 'published');
      const guideLines = text.split('## Guides\n\n')[1]!.split('\n\n')[0]!.trim().split('\n');
      expect(guideLines).toHaveLength(published.length);
      for (const guide of published) {
        expect(guideLines).toContain(`- [${guide.title}](${TEST_BASE_URL}/api/v1/guides/${guide.slug}.md): ${guide.summary}`);
      }
      for (const guide of sample.guides.filter((g) => g.status !== 'published')) {
        expect(text).not.toContain(`/api/v1/guides/${guide.slug}.md)`);
      }
      // Newest first, like the list without q.
      const list = (await t.app.inject({ url: '/api/v1/guides?limit=50' })).json<{ items: Array<{ slug: string }> }>();
      expect(guideLines.map((line) => line.slice(line.lastIndexOf('/api/v1/guides/') + 15, line.indexOf('.md)')))).toEqual(
        list.items.map((item) => item.slug),
      );
      expect(text).toContain(
        `## Optional\n\n- [Terms of use for the guides and the API](https://guides.example.com/terms): terms-of-service\n`,
      );
    });

    it('is cached until the content changes: strong ETag, 304, HEAD, then the new guides after an import', async () => {
      const live = await buildTestApp();
      try {
        const first = await live.app.inject({ url: '/llms.txt' });
        expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
        expect(first.headers['cache-control']).toMatch(/^public, max-age=\d+, stale-while-revalidate=\d+$/);
        const again = await live.app.inject({ url: '/llms.txt', headers: { 'if-none-match': String(first.headers.etag) } });
        expect(again.statusCode).toBe(304);
        expect(again.body).toBe('');
        const head = await live.app.inject({ method: 'HEAD', url: '/llms.txt' });
        expect(head.statusCode).toBe(200);
        expect(head.headers.etag).toBe(first.headers.etag);
        expect(head.headers['content-type']).toBe('text/markdown; charset=utf-8');
        expect(head.body).toBe('');

        await live.importContent(
          makeContent([makeGuide({ slug: 'brand-new', title: 'Brand [new] guide', summary: 'Line one.\nLine two.' })]),
        );
        const after = await live.app.inject({ url: '/llms.txt', headers: { 'if-none-match': String(first.headers.etag) } });
        expect(after.statusCode).toBe(200);
        expect(after.headers.etag).not.toBe(first.headers.etag);
        expect(after.body.startsWith('# Test Guides\n\n> Guides for tests.\n')).toBe(true);
        // Brackets cannot end the link text early; a summary stays on its line.
        expect(after.body).toContain(`- [Brand \\[new\\] guide](${TEST_BASE_URL}/api/v1/guides/brand-new.md): Line one. Line two.\n`);
        expect(after.body).not.toContain('reduce-food-waste');
        expect(after.body).not.toContain('## Optional');
      } finally {
        await live.close();
      }
    });

    it('answers 503 before any content was imported', async () => {
      const empty = await buildTestApp({ content: 'none' });
      try {
        const res = await empty.app.inject({ url: '/llms.txt' });
        expect(res.statusCode).toBe(503);
        expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(res.headers['retry-after']).toBe('30');
      } finally {
        await empty.close();
      }
    });
  });

  describe('GET /.well-known/api-catalog', () => {
    it('is an RFC 9727 linkset anchored at the API, with the api-catalog Link on GET and HEAD', async () => {
      const res = await t.app.inject({ url: '/.well-known/api-catalog' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(
        'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"; charset=utf-8',
      );
      expect(res.headers.link).toBe(`<${TEST_BASE_URL}/.well-known/api-catalog>; rel="api-catalog"`);
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      const catalog = res.json<Catalog>();
      expect(catalog.linkset).toHaveLength(1);
      expect(catalog.linkset[0]!.anchor).toBe(`${TEST_BASE_URL}/api/v1`);
      expect(catalog.linkset[0]!['service-desc']).toEqual([
        { href: `${TEST_BASE_URL}/openapi.json`, type: 'application/openapi+json', title: 'OpenAPI definition of this API' },
      ]);
      expect(catalog.linkset[0]!['service-doc']).toEqual([{ href: `${TEST_BASE_URL}/docs`, type: 'text/html', title: 'API reference' }]);

      const head = await t.app.inject({ method: 'HEAD', url: '/.well-known/api-catalog' });
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
      expect(head.headers.link).toBe(`<${TEST_BASE_URL}/.well-known/api-catalog>; rel="api-catalog"`);
      expect(head.headers['content-type']).toBe(res.headers['content-type']);
    });

    it('holds exactly the links of GET /api/v1/resources, grouped by relation, before and after an import', async () => {
      const live = await buildTestApp();
      try {
        const agree = async (): Promise<number> => {
          const { links } = (await live.app.inject({ url: '/api/v1/resources' })).json<{ links: Link[] }>();
          const catalog = (await live.app.inject({ url: '/.well-known/api-catalog' })).json<Catalog>();
          const relations = Object.entries(catalog.linkset[0]!).filter(([rel]) => rel !== 'anchor');
          const flattened = relations.flatMap(([rel, targets]) => (targets as LinkTarget[]).map((target) => ({ rel, ...target })));
          const key = (link: Link) => JSON.stringify([link.rel, link.href, link.type ?? null, link.title]);
          expect(flattened.map((l) => key(l as Link)).sort()).toEqual(links.map(key).sort());
          return links.length;
        };
        expect(await agree()).toBe(7);
        await live.importContent(
          makeContent([makeGuide({ slug: 'one' })], {
            resources: [
              { rel: 'status', href: 'https://status.example.org', title: 'Service status' },
              { rel: 'help', href: 'https://example.org/help', title: 'Help', type: 'text/html' },
            ],
          }),
        );
        expect(await agree()).toBe(6);
      } finally {
        await live.close();
      }
    });
  });

  describe('GET /problems/{name}', () => {
    it('answers a short HTML page for every problem type: what happened and what to do', async () => {
      for (const [name, problem] of Object.entries(PROBLEM_TYPES)) {
        const res = await t.app.inject({ url: `/problems/${name}`, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
        expect(res.statusCode, name).toBe(200);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
        expect(res.body).toContain(`<h1>${problem.title}</h1>`);
        expect(res.body).toContain(`<strong>${problem.status}</strong>`);
        const html = (text: string) =>
          text
            .replace(/&/g, '&amp;')
            .replace(/'/g, '&#39;')
            .replace(/"/g, '&quot;')
            .replace(/`([^`]+)`/g, '<code>$1</code>');
        expect(res.body).toContain(html(problem.about));
        expect(res.body).toContain(html(problem.advice));
        expect(res.body).not.toMatch(/<script/i);
      }
    });

    it('answers JSON when the client asks for application/json or application/problem+json', async () => {
      for (const accept of ['application/json', 'application/problem+json', 'text/html;q=0.5, application/json']) {
        const res = await t.app.inject({ url: '/problems/invalid-parameter', headers: { accept } });
        expect(res.statusCode, accept).toBe(200);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.json()).toEqual({
          type: `${TEST_BASE_URL}/problems/invalid-parameter`,
          name: 'invalid-parameter',
          title: 'Invalid parameter',
          status: 400,
          description: PROBLEM_TYPES['invalid-parameter'].about,
          advice: PROBLEM_TYPES['invalid-parameter'].advice,
        });
      }
      const both = await t.app.inject({ url: '/problems/invalid-parameter', headers: { accept: 'text/html, application/json;q=0.9' } });
      expect(both.headers['content-type']).toBe('text/html; charset=utf-8');
      // Two representations of one URL: told apart by Vary: Accept and their own ETags.
      const html = await t.app.inject({ url: '/problems/invalid-parameter' });
      const json = await t.app.inject({ url: '/problems/invalid-parameter', headers: { accept: 'application/json' } });
      expect(html.headers.vary).toBe('Accept, Accept-Encoding');
      expect(json.headers.vary).toBe('Accept, Accept-Encoding');
      expect(html.headers.etag).toBe(both.headers.etag);
      expect(json.headers.etag).not.toBe(html.headers.etag);
    });

    it('is where every problem type URL the API sends resolves', async () => {
      const res = await t.app.inject({ url: '/api/v1/guides?limit=0' });
      const { type } = res.json<{ type: string }>();
      expect(type.startsWith(TEST_BASE_URL)).toBe(true);
      const page = await t.app.inject({ url: type.slice(TEST_BASE_URL.length), headers: { accept: 'application/json' } });
      expect(page.statusCode).toBe(200);
      expect(page.json()).toMatchObject({ type, status: 400 });
    });

    it('answers the ordinary 404 problem for names that are not problem types', async () => {
      const reference = await t.app.inject({ url: '/api/v1/guides/no-such-guide' });
      for (const name of ['no-such-problem', 'Not-Found', 'constructor', '__proto__', 'a'.repeat(300), '%3Cscript%3E']) {
        const res = await t.app.inject({ url: `/problems/${name}` });
        expect(res.statusCode, name).toBe(404);
        expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(res.body).toBe(reference.body);
      }
    });
  });
});

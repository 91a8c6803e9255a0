/**
 * A guide as Markdown: negotiation on Accept (q-values, ties to JSON), the `.md` twin, front
 * matter plus the body as authored, validators of its own, and the one identical 404. The
 * alternation tests make sure neither the representation cache nor the early answers in front of
 * Fastify ever send one format to a request that chose the other.
 */
import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../helpers/guide-factory.js';

const BODY =
  '# Alpha guide\n\nCafé **menus** for the week.\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n' +
  'A line of prep notes, kept as written.\n'.repeat(60);
const content = makeContent([
  makeGuide({
    slug: 'alpha',
    title: 'Alpha: "the first"',
    summary: 'Everything about alpha.',
    tags: ['prep', 'costing'],
    language: 'en-GB',
    publishedAt: '2026-02-01T09:00:00Z',
    updatedAt: '2026-03-05T10:30:00Z',
    author: { name: 'Ana Ruiz', url: 'https://example.com/ana' },
    canonicalUrl: 'https://guides.example.com/alpha',
    markdown: BODY,
  }),
  makeGuide({ slug: 'beta', publishedAt: '2026-01-01T09:00:00Z' }),
  makeGuide({ slug: 'hidden', status: 'retained' }),
  makeGuide({ slug: 'gone', status: 'archived' }),
]);

const JSON_URL = '/api/v1/guides/alpha';
const MD_URL = '/api/v1/guides/alpha.md';
const MD_TYPE = 'text/markdown; charset=utf-8';

function decoded(headers: IncomingHttpHeaders | Record<string, unknown>, raw: Buffer): string {
  const coding = headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(raw).toString('utf8');
  if (coding === 'gzip') return gunzipSync(raw).toString('utf8');
  return raw.toString('utf8');
}

describe('a guide as Markdown', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ content });
  });
  afterAll(() => t.close());

  const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url, headers });

  it('is YAML front matter with the public fields, then the body exactly as authored', async () => {
    const res = await get(MD_URL);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(MD_TYPE);
    const [, front, rest] = /^---\n([\s\S]*?)\n---\n\n([\s\S]*)$/.exec(res.body) ?? [];
    expect(rest).toBe(BODY);
    expect(parse(front!)).toEqual({
      title: 'Alpha: "the first"',
      summary: 'Everything about alpha.',
      url: `${TEST_BASE_URL}/api/v1/guides/alpha`,
      publishedAt: '2026-02-01T09:00:00Z',
      updatedAt: '2026-03-05T10:30:00Z',
      tags: ['prep', 'costing'],
      language: 'en-GB',
      author: { name: 'Ana Ruiz', url: 'https://example.com/ana' },
      canonicalUrl: 'https://guides.example.com/alpha',
    });
    const beta = parse(/^---\n([\s\S]*?)\n---\n/.exec((await get('/api/v1/guides/beta.md')).body)![1]!) as Record<string, unknown>;
    expect(Object.keys(beta)).toEqual(['title', 'summary', 'url', 'publishedAt', 'updatedAt', 'tags', 'language']);
  });

  it.each([
    ['text/markdown', 'markdown'],
    ['text/markdown, text/html, */*', 'markdown'],
    ['text/markdown, text/plain;q=0.9, */*;q=0.8', 'markdown'],
    ['application/json;q=0.5, text/markdown;q=0.6', 'markdown'],
    ['text/*', 'markdown'],
    ['TEXT/Markdown', 'markdown'],
    ['', 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['text/markdown, application/json', 'json'],
    ['application/json, text/markdown', 'json'],
    ['text/markdown;q=0.5, application/json', 'json'],
    ['text/markdown;q=0.9, */*', 'json'],
    ['text/markdown;q=0', 'json'],
    ['text/markdown;q=0, */*', 'json'],
    ['text/html', 'json'],
    ['image/png', 'json'],
    ['not a media type', 'json'],
  ])('Accept %j gives %s, never a 406', async (accept, format) => {
    const res = await get(JSON_URL, accept === '' ? {} : { accept });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(format === 'markdown' ? MD_TYPE : 'application/json; charset=utf-8');
    // The .md twin is Markdown whatever the Accept.
    expect((await get(MD_URL, accept === '' ? {} : { accept })).headers['content-type']).toBe(MD_TYPE);
  });

  it('carries its own strong ETag, Last-Modified, Vary, the token estimate and the Link to JSON, the same on both URLs', async () => {
    const md = await get(MD_URL);
    const negotiated = await get(JSON_URL, { accept: 'text/markdown' });
    const json = await get(JSON_URL);
    expect(negotiated.body).toBe(md.body);
    for (const res of [md, negotiated]) {
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(res.headers.etag).toBe(md.headers.etag);
      expect(res.headers['last-modified']).toBe('Thu, 05 Mar 2026 10:30:00 GMT');
      expect(res.headers.vary).toBe('Accept, Accept-Encoding');
      expect(res.headers['x-markdown-tokens']).toBe(String(Math.ceil(Buffer.byteLength(md.body) / 4)));
      expect(res.headers.link).toBe(`<${TEST_BASE_URL}/api/v1/guides/alpha>; rel="alternate"; type="application/json"`);
      expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+/);
    }
    expect(json.headers.etag).not.toBe(md.headers.etag);
    expect(json.headers.link).toBe(`<${TEST_BASE_URL}/api/v1/guides/alpha.md>; rel="alternate"; type="text/markdown"`);
    expect(json.headers['x-markdown-tokens']).toBeUndefined();
    expect(json.headers['last-modified']).toBe(md.headers['last-modified']);
  });

  it('lets browser code read the token estimate and the alternate link (CORS exposed headers)', async () => {
    const res = await get(MD_URL, { origin: 'https://app.example' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(res.headers['access-control-expose-headers']).split(/,\s*/);
    for (const name of ['X-Markdown-Tokens', 'Link', 'ETag', 'Last-Modified']) expect(exposed).toContain(name);
  });

  it('answers 304 to its own ETag only, and HEAD like GET', async () => {
    const md = await get(MD_URL);
    const json = await get(JSON_URL);
    const mdEtag = md.headers.etag as string;
    const jsonEtag = json.headers.etag as string;
    expect((await get(MD_URL, { 'if-none-match': mdEtag })).statusCode).toBe(304);
    expect((await get(JSON_URL, { accept: 'text/markdown', 'if-none-match': mdEtag })).statusCode).toBe(304);
    // Another representation's tag does not validate this one.
    const wrong = await get(MD_URL, { 'if-none-match': jsonEtag });
    expect(wrong.statusCode).toBe(200);
    expect(wrong.headers['content-type']).toBe(MD_TYPE);
    expect((await get(JSON_URL, { 'if-none-match': mdEtag })).statusCode).toBe(200);
    const head = await get(MD_URL, {}, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    for (const name of ['content-type', 'etag', 'last-modified', 'vary', 'x-markdown-tokens', 'link'])
      expect(head.headers[name], name).toBe(md.headers[name]);
  });

  it('is compressed with gzip or brotli like JSON, each coding its own tag', async () => {
    const plain = await get(MD_URL);
    for (const coding of ['br', 'gzip']) {
      const res = await get(JSON_URL, { accept: 'text/markdown', 'accept-encoding': coding });
      expect(res.headers['content-encoding']).toBe(coding);
      expect(decoded(res.headers, res.rawPayload)).toBe(plain.body);
      expect(res.headers.etag).toBe(`${(plain.headers.etag as string).slice(0, -1)}-${coding}"`);
    }
  });

  it('gives unpublished, unknown and malformed slugs the same 404 whatever the Accept, with or without .md', async () => {
    const reference = await get('/api/v1/guides/no-such-guide');
    expect(reference.statusCode).toBe(404);
    const stable = (headers: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(headers).filter(([name]) => !['date', 'x-request-id', 'ratelimit'].includes(name)));
    const slugs = ['hidden', 'gone', 'no-such-guide', 'Bad--Slug', 'a'.repeat(101), 'a%2Fb', ''];
    for (const slug of slugs) {
      for (const suffix of ['', '.md']) {
        for (const accept of [undefined, 'text/markdown', 'application/json', '*/*', 'text/markdown;q=0']) {
          const res = await get(`/api/v1/guides/${slug}${suffix}`, accept === undefined ? {} : { accept });
          const where = `${slug}${suffix} ${accept}`;
          expect(res.statusCode, where).toBe(404);
          expect(res.rawPayload.equals(reference.rawPayload), where).toBe(true);
          expect(stable(res.headers), where).toEqual(stable(reference.headers));
          expect(res.headers.etag, where).toBeUndefined();
        }
      }
    }
  });

  it('never sends one format to a request that chose the other, cached or not, revalidating or not', async () => {
    const fresh = await buildTestApp({ content });
    try {
      const md = await fresh.app.inject({ url: MD_URL });
      const json = await fresh.app.inject({ url: JSON_URL });
      const tags = { markdown: md.headers.etag as string, json: json.headers.etag as string };
      for (let round = 0; round < 40; round += 1) {
        const format = round % 2 === 0 ? 'markdown' : 'json';
        const revalidate = round % 4 >= 2;
        const headers: Record<string, string> = format === 'markdown' ? { accept: 'text/markdown' } : { accept: 'application/json' };
        if (revalidate) headers['if-none-match'] = tags[format];
        if (round % 8 >= 4) headers['accept-encoding'] = 'br';
        const res = await fresh.app.inject({ url: JSON_URL, headers });
        const where = `round ${round}: ${format}${revalidate ? ', revalidating' : ''}`;
        expect(res.statusCode, where).toBe(revalidate ? 304 : 200);
        expect(res.headers.etag, where).toBe(headers['accept-encoding'] ? `${tags[format].slice(0, -1)}-br"` : tags[format]);
        if (!revalidate) {
          expect(res.headers['content-type'], where).toBe(format === 'markdown' ? MD_TYPE : 'application/json; charset=utf-8');
          expect(decoded(res.headers, res.rawPayload), where).toBe(format === 'markdown' ? md.body : json.body);
        }
        // A tag of the other format never revalidates this one.
        const crossed = await fresh.app.inject({
          url: JSON_URL,
          headers: { ...headers, 'if-none-match': tags[format === 'json' ? 'markdown' : 'json'] },
        });
        expect(crossed.statusCode, where).toBe(200);
        expect(crossed.headers['content-type'], where).toBe(format === 'markdown' ? MD_TYPE : 'application/json; charset=utf-8');
      }
    } finally {
      await fresh.close();
    }
  });
});

describe('a guide as Markdown on a real socket (early answers in front of Fastify)', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildTestApp({ content });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => t.close());

  const get = (url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(`${base}${url}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });

  const earlyAnswers = async (): Promise<number> =>
    Number(/^guides_early_answers_total (\d+)$/m.exec((await t.app.inject({ url: '/metrics' })).body)?.[1]);

  it('alternates JSON and Markdown for one URL, many times, and each request gets the format it chose', async () => {
    const accepts = { json: 'application/json', markdown: 'text/markdown, */*;q=0.8' };
    const first = { json: await get(JSON_URL, { accept: accepts.json }), markdown: await get(JSON_URL, { accept: accepts.markdown }) };
    const before = await earlyAnswers();
    for (let round = 0; round < 60; round += 1) {
      const format = round % 2 === 0 ? 'json' : 'markdown';
      const revalidate = round % 6 >= 3;
      const headers: Record<string, string> = { accept: accepts[format] };
      if (revalidate) headers['if-none-match'] = first[format].headers.etag as string;
      const res = await get(JSON_URL, headers);
      const where = `round ${round}: ${format}${revalidate ? ', revalidating' : ''}`;
      expect(res.status, where).toBe(revalidate ? 304 : 200);
      expect(res.headers.etag, where).toBe(first[format].headers.etag);
      expect(res.headers.link, where).toBe(first[format].headers.link);
      if (!revalidate) {
        expect(res.headers['content-type'], where).toBe(first[format].headers['content-type']);
        expect(res.body.equals(first[format].body), where).toBe(true);
      }
    }
    // Most of them were answered in front of Fastify: the cache was really in play.
    expect(await earlyAnswers()).toBeGreaterThan(before + 40);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsContentSecurityPolicy } from '../../../src/http/plugins/docs.js';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';

describe('/docs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('serves the API reference page with a CSP that allows its own scripts and styles and nothing from elsewhere', async () => {
    const res = await t.app.inject({ url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('<title>Restaurant Guides API reference</title>');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toBe(docsContentSecurityPolicy(t.config));
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ${TEST_BASE_URL}`);
    expect(csp).not.toMatch(/unsafe-eval|https?:\/\/(?!api\.test\.example)/);
    const head = await t.app.inject({ method: 'HEAD', url: '/docs' });
    expect(head.statusCode).toBe(200);
  });

  it('loads every script and stylesheet from this service (no CDN: works offline)', async () => {
    const page = (await t.app.inject({ url: '/docs' })).body;
    const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(5);
    for (const asset of assets) {
      expect(asset, asset).toMatch(/^\/docs\/static\/[\w.-]+$/);
      const res = await t.app.inject({ url: asset });
      expect(res.statusCode, asset).toBe(200);
      expect(res.rawPayload.length, asset).toBeGreaterThan(100);
    }
    expect(assets).toEqual(
      expect.arrayContaining(['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css', '/docs/static/swagger-initializer.js']),
    );
    const bundle = await t.app.inject({ url: '/docs/static/swagger-ui-bundle.js' });
    expect(bundle.headers['content-type']).toMatch(/^application\/javascript/);
  });

  it('points Swagger UI at /openapi.json, the one published document', async () => {
    const initializer = (await t.app.inject({ url: '/docs/static/swagger-initializer.js' })).body;
    expect(initializer).toContain("url: resolveUrl('./json')");
    expect(initializer).toContain('"layout":"BaseLayout"');
    expect(initializer).toContain('validatorUrl: null');
    const redirect = await t.app.inject({ url: '/docs/json' });
    expect(redirect.statusCode).toBe(302);
    expect(redirect.headers.location).toBe('../openapi.json');
    expect(new URL(String(redirect.headers.location), `${TEST_BASE_URL}/docs/json`).pathname).toBe('/openapi.json');
    const yaml = await t.app.inject({ url: '/docs/yaml' });
    expect(yaml.statusCode).toBe(404);
    expect(yaml.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });

  it("keeps its policy to /docs: API responses do not get the page's CSP", async () => {
    const res = await t.app.inject({ url: '/api/v1/product' });
    expect(res.headers['content-security-policy']).not.toBe(docsContentSecurityPolicy(t.config));
  });
});

describe('/docs under the path prefix of PUBLIC_BASE_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { PUBLIC_BASE_URL: 'https://example.com/guides-api/' } });
  });
  afterAll(() => t.close());

  it('links its assets under the prefix, where a proxy that strips it sends them back to /docs/static', async () => {
    const page = (await t.app.inject({ url: '/docs' })).body;
    const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets).toEqual(
      expect.arrayContaining(['/guides-api/docs/static/swagger-ui-bundle.js', '/guides-api/docs/static/swagger-initializer.js']),
    );
    for (const asset of assets) {
      expect(asset, asset).toMatch(/^\/guides-api\/docs\/static\/[\w.-]+$/);
      const res = await t.app.inject({ url: asset.slice('/guides-api'.length) });
      expect(res.statusCode, asset).toBe(200);
    }
    const csp = String((await t.app.inject({ url: '/docs' })).headers['content-security-policy']);
    expect(csp).toContain("connect-src 'self' https://example.com;");
  });

  it('reads the document from {base}/openapi.json', async () => {
    const redirect = await t.app.inject({ url: '/docs/json' });
    expect(redirect.statusCode).toBe(302);
    expect(new URL(String(redirect.headers.location), 'https://example.com/guides-api/docs/json').href).toBe(
      'https://example.com/guides-api/openapi.json',
    );
  });
});

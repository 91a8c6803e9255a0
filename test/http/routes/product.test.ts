import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOFTWARE_VERSION } from '../../../src/lib/version.js';
import { buildTestApp, TEST_BASE_URL } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';

describe('GET /api/v1/product', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('describes the product from product.yaml with capabilities and absolute links', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/product' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({
      name: 'Restaurant Guides',
      description: 'Practical guides for running a restaurant, from food safety and allergens to menu costing, staffing and service.',
      homepage: 'https://guides.example.com',
      apiVersion: 'v1',
      softwareVersion: SOFTWARE_VERSION,
      capabilities: {
        readOnly: true,
        search: { parameter: 'q', maxLength: 200 },
        pagination: { style: 'cursor', cursorParameter: 'cursor', limitParameter: 'limit', defaultLimit: 20, maxLimit: 50 },
        formats: ['application/json', 'text/markdown'],
      },
      links: {
        guides: `${TEST_BASE_URL}/api/v1/guides`,
        resources: `${TEST_BASE_URL}/api/v1/resources`,
        openapi: `${TEST_BASE_URL}/openapi.json`,
        docs: `${TEST_BASE_URL}/docs`,
        mcp: `${TEST_BASE_URL}/mcp`,
      },
    });
  });

  it('builds links from PUBLIC_BASE_URL, never from the Host header', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/product', headers: { host: 'evil.example' } });
    expect(res.body).not.toContain('evil.example');
  });

  it('answers 503 before any content was imported', async () => {
    const empty = await buildTestApp({ content: 'none' });
    try {
      const res = await empty.app.inject({ method: 'GET', url: '/api/v1/product' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.headers['retry-after']).toBe('30');
      expect(res.json()).toMatchObject({ type: `${TEST_BASE_URL}/problems/service-unavailable`, status: 503 });
    } finally {
      await empty.close();
    }
  });
});

/**
 * /docs in a real headless Chromium (Debian's, driven by playwright-core) against a real listening
 * server: the page renders every operation, "Try it out" → Execute gets a live 200, nothing
 * is fetched from anywhere but the service, and the Content-Security-Policy blocks nothing the page
 * needs. Then the same behind a reverse proxy that serves the API under a path prefix (the one in
 * PUBLIC_BASE_URL): the page, its assets, its document and "Try it out" all stay under the prefix,
 * and its Schemas section shows the named schemas. Saves test-artifacts/docs.png, docs-prefix.png
 * and docs-prefix-schemas.png. Needs /usr/bin/chromium (`apt-get install chromium`): missing, it
 * fails under CI=true and skips loudly elsewhere.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../helpers/build-test-app.js';
import type { TestApp } from '../../helpers/build-test-app.js';
import { checkAndCount } from '../../helpers/contract.js';
import { freePort } from '../../helpers/redis-server.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const ARTIFACTS = path.resolve(import.meta.dirname, '..', '..', '..', 'test-artifacts');
const SCREENSHOT = path.join(ARTIFACTS, 'docs.png');
const PREFIX = '/guides-api';
const NAMED_SCHEMAS = ['GuideSummary', 'GuideDetail', 'GuideList', 'Product', 'ResourceLinks', 'Problem'];
const OPERATIONS = [
  { id: 'operations-guides-listGuides', path: '/api/v1/guides' },
  { id: 'operations-guides-getGuide', path: '/api/v1/guides/{slug}' },
  { id: 'operations-product-getProduct', path: '/api/v1/product' },
  { id: 'operations-resources-listResources', path: '/api/v1/resources' },
];

const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  if (process.env.CI === 'true') {
    throw new Error(`${CHROMIUM} is missing: CI must install Debian's chromium (see .ci/run) to run the /docs browser test`);
  }
  console.warn(
    `\n!!! SKIPPING the /docs browser test: ${CHROMIUM} is missing. Install it with: apt-get update && apt-get install -y chromium\n`,
  );
}

/** How many operations the document has: Swagger UI draws one block for each. */
function operationCount(document: unknown): number {
  const paths = (document as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.values(paths).reduce((sum, item) => sum + Object.keys(item).filter((key) => HTTP_METHODS.has(key)).length, 0);
}
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

interface PrefixProxy {
  port: number;
  /** Request paths the proxy was asked for outside the prefix (answered 404, never forwarded). */
  outside: string[];
  close(): Promise<void>;
}

/** A reverse proxy on 127.0.0.1 that serves the app on `targetPort` under `prefix`, as nginx's `location /prefix/ { proxy_pass …/; }` does. */
async function startPrefixProxy(prefix: string, targetPort: number): Promise<PrefixProxy> {
  const outside: string[] = [];
  const server: Server = createHttpServer((req, res) => {
    const url = req.url ?? '/';
    if (url !== prefix && !url.startsWith(`${prefix}/`) && !url.startsWith(`${prefix}?`)) {
      outside.push(url);
      res.writeHead(404).end();
      return;
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: url.slice(prefix.length) || '/', headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    outside,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.skipIf(!hasChromium)('/docs in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  beforeAll(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    t = await buildTestApp({ env: { PUBLIC_BASE_URL: origin, PORT: String(port) } });
    await t.app.listen({ host: '127.0.0.1', port });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 20_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders every operation and runs a live "Try it out" request that answers 200', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const foreign: string[] = [];
    const problems: string[] = [];
    // Offline proof: anything not served by this service would be a CDN or tracker request.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));

    const response = await page.goto(`${origin}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    for (const operation of OPERATIONS) {
      const block = page.locator(`#${operation.id}`);
      await block.waitFor({ state: 'visible', timeout: 15_000 });
      await expect(block.locator('.opblock-summary-path').getAttribute('data-path')).resolves.toBe(operation.path);
    }
    await expect(page.locator('.opblock').count()).resolves.toBe(operationCount(t.app.swagger()));
    await expect(page.locator('.info .title').textContent()).resolves.toContain('Restaurant Guides API');

    // Try it out → Execute on GET /api/v1/guides with limit=2.
    const list = page.locator('#operations-guides-listGuides');
    await list.locator('.opblock-summary').click();
    await list.locator('button.try-out__btn').click();
    await list.locator('tr[data-param-name="limit"] input').fill('2');
    const [live] = await Promise.all([
      page.waitForResponse((res) => res.url().startsWith(`${origin}/api/v1/guides?`), { timeout: 15_000 }),
      list.locator('button.execute').click(),
    ]);
    expect(live.status()).toBe(200);
    expect(new URL(live.url()).searchParams.get('limit')).toBe('2');
    const status = list.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ state: 'visible', timeout: 10_000 });
    await expect(status.textContent()).resolves.toMatch(/^\s*200/);
    await expect(list.locator('.live-responses-table .response .response-col_description').first().textContent()).resolves.toContain(
      'nextCursor',
    );

    // The live answer, as the browser got it over the socket, holds to the document too.
    // Playwright hands over the body already decompressed, so the encoding header goes.
    const headers = await live.allHeaders();
    delete headers['content-encoding'];
    checkAndCount(t.app.swagger(), {
      method: 'GET',
      url: live.url().slice(origin.length),
      statusCode: live.status(),
      headers,
      rawBody: await live.body(),
    });

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(foreign).toEqual([]);
    expect(problems.filter((text) => /Content Security Policy|Refused to/i.test(text))).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe.skipIf(!hasChromium)('/docs in headless Chromium behind a proxy serving the API under a path prefix', () => {
  let t: TestApp;
  let proxy: PrefixProxy;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    const appPort = await freePort();
    proxy = await startPrefixProxy(PREFIX, appPort);
    base = `http://127.0.0.1:${proxy.port}${PREFIX}`;
    t = await buildTestApp({ env: { PUBLIC_BASE_URL: base, PORT: String(appPort) } });
    await t.app.listen({ host: '127.0.0.1', port: appPort });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 20_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await t?.close();
  });

  it('renders the operations and the named schemas, runs "Try it out" through the proxy, and fetches nothing outside the prefix', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const foreign: string[] = [];
    const fetched: string[] = [];
    const problems: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:')) return route.continue();
      // Anything outside the prefix is what a proxy in front would not serve: the page would break there.
      if (url.startsWith(`${base}/`)) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    // Every request, redirects followed included (page.route sees only the first of a chain).
    page.on('request', (request) => {
      fetched.push(request.url());
    });

    const response = await page.goto(`${base}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    for (const operation of OPERATIONS) {
      const block = page.locator(`#${operation.id}`);
      await block.waitFor({ state: 'visible', timeout: 15_000 });
      await expect(block.locator('.opblock-summary-path').getAttribute('data-path')).resolves.toBe(operation.path);
    }
    expect(fetched).toEqual(
      expect.arrayContaining([
        `${base}/docs/static/swagger-ui-bundle.js`,
        `${base}/docs/static/swagger-initializer.js`,
        `${base}/openapi.json`,
      ]),
    );

    // The Schemas section lists the document's named schemas, each as a model of its own.
    const models = page.locator('section.models');
    await models.waitFor({ state: 'visible', timeout: 10_000 });
    await expect(models.locator('.models-control').textContent()).resolves.toContain('Schemas');
    // OpenAPI 3.1: Swagger UI draws each component schema as a top-level JSON Schema 2020-12 article.
    const titles = models.locator('article[data-json-schema-level="0"] > .json-schema-2020-12-head .json-schema-2020-12__title');
    await titles.first().waitFor({ state: 'visible', timeout: 10_000 });
    await expect(titles.allTextContents()).resolves.toEqual(expect.arrayContaining(NAMED_SCHEMAS));

    // Try it out goes to the document's server, PUBLIC_BASE_URL: through the proxy, under the prefix.
    const list = page.locator('#operations-guides-listGuides');
    await list.locator('.opblock-summary').click();
    await list.locator('button.try-out__btn').click();
    await list.locator('tr[data-param-name="limit"] input').fill('2');
    const [live] = await Promise.all([
      page.waitForResponse((res) => res.url().startsWith(`${base}/api/v1/guides?`), { timeout: 15_000 }),
      list.locator('button.execute').click(),
    ]);
    expect(live.status()).toBe(200);
    const status = list.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ state: 'visible', timeout: 10_000 });
    await expect(status.textContent()).resolves.toMatch(/^\s*200/);
    await expect(list.locator('.live-responses-table .response .response-col_description').first().textContent()).resolves.toContain(
      `${base}/api/v1/guides/`,
    );
    const headers = await live.allHeaders();
    delete headers['content-encoding'];
    checkAndCount(t.app.swagger(), {
      method: 'GET',
      url: live.url().slice(base.length),
      statusCode: live.status(),
      headers,
      rawBody: await live.body(),
    });

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs-prefix.png'), fullPage: true });
    await models.screenshot({ path: path.join(ARTIFACTS, 'docs-prefix-schemas.png') });
    expect(foreign).toEqual([]);
    expect(proxy.outside).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

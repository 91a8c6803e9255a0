/**
 * buildTestApp: the real app on a real, fresh SQLite file in a temporary folder, loaded with the
 * sample content (or the content given). Call close() in afterEach/afterAll.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { RequestListener } from 'node:http';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import lightMyRequest from 'light-my-request';
import { inject } from 'vitest';
import type { InjectOptions, Response } from 'light-my-request';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Config } from '../../src/config.js';
import type { ContentSet } from '../../src/guides/guide.js';
import type { App } from '../../src/http/app-types.js';
import type { SearchPageRenderer } from '../../src/representation/rendered-page.js';
import type { GuideStore } from '../../src/store/guide-store.js';
import { createSqliteGuideStore } from '../../src/store/sqlite/sqlite-guide-store.js';
import { checkEveryInjectedResponse, checkInjected } from './contract.js';
import { loadSampleContent } from './sample-content.js';

export const TEST_BASE_URL = 'https://api.test.example';

export interface TestApp {
  app: App;
  store: GuideStore;
  config: Config;
  dir: string;
  /** Imports content and makes the app see it at once (no waiting for the poll). */
  importContent(content: ContentSet): Promise<void>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  content?: ContentSet | 'none';
  env?: Record<string, string>;
  /** Open your own store (for instance PostgreSQL); default: a fresh SQLite file. */
  store?: GuideStore;
  /** What the store's backend offers beside it, as openStore gives it (a SQLite store with search workers: its searchPages). */
  searchPages?: SearchPageRenderer;
  /** A pino logger to read the app's log lines; default: none. */
  logger?: FastifyBaseLogger;
}

/** A new folder inside the run's temporary folder (temp-global-setup.ts), removed after the run. */
export function makeTempDir(prefix = 'guides-test-'): string {
  return mkdtempSync(path.join(inject('testTempRoot') ?? tmpdir(), prefix));
}

/**
 * A request sent the way requests from the network go: into the HTTP server's request listener,
 * so through the fast path in front of Fastify (src/http/fast-path/) as well as Fastify. app.inject
 * is Fastify's own and enters Fastify directly; only the fast path's tests need this one. Each
 * response is checked against /openapi.json as app.inject's are.
 */
export function injectThroughListener(app: App): (options: InjectOptions) => Promise<Response> {
  const [listener] = app.server.listeners('request') as RequestListener[];
  if (listener === undefined) throw new Error('the app has no request listener');
  return async (options) => checkInjected(app, await lightMyRequest(listener, options));
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = makeTempDir();
  const config = loadConfig({
    DATABASE_URL: `sqlite:${path.join(dir, 'guides.db')}`,
    PUBLIC_BASE_URL: TEST_BASE_URL,
    LOG_LEVEL: 'silent',
    CONTENT_POLL_MS: '50',
    // Many apps share one test process, and building one blocks the loop long enough to make the
    // others shed load; the load-shedding tests turn it on explicitly.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...options.env,
  });
  const store = options.store ?? createSqliteGuideStore(path.join(dir, 'guides.db'));
  await store.migrate();
  const content = options.content ?? (await loadSampleContent());
  if (content !== 'none') await store.importContent(content);
  const app = buildApp({ config, store, searchPages: options.searchPages, logger: options.logger ?? false });
  await app.ready();
  // Every response a test sees through app.inject is checked against the published document.
  checkEveryInjectedResponse(app);
  return {
    app,
    store,
    config,
    dir,
    async importContent(next) {
      await store.importContent(next);
      await app.refreshContentVersion();
    },
    async close() {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

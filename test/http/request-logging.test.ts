/** Request logs: one JSON line per request at info, the request id on every line of a request, no secrets. */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/app-types.js';
import type { GuideStore } from '../../src/store/guide-store.js';
import { createSqliteGuideStore } from '../../src/store/sqlite/sqlite-guide-store.js';
import { makeTempDir, TEST_BASE_URL } from '../helpers/build-test-app.js';
import { loadSampleContent } from '../helpers/sample-content.js';

interface LogLine {
  level: number;
  msg: string;
  requestId?: string;
  [key: string]: unknown;
}

describe('request logging', () => {
  const lines: LogLine[] = [];
  const raw: string[] = [];
  let app: App;
  let store: GuideStore;
  let dir: string;
  beforeAll(async () => {
    dir = makeTempDir();
    store = createSqliteGuideStore(path.join(dir, 'guides.db'));
    await store.migrate();
    await store.importContent(await loadSampleContent());
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          raw.push(line);
          lines.push(JSON.parse(line) as LogLine);
        }
        callback();
      },
    });
    const config = loadConfig({ DATABASE_URL: `sqlite:${path.join(dir, 'guides.db')}`, PUBLIC_BASE_URL: TEST_BASE_URL, LOG_LEVEL: 'info' });
    app = buildApp({ config, store, logger: pino({ level: 'info' }, stream) });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes one info line per request with method, route, status and duration, tagged with the request id', async () => {
    const res = await app.inject({ url: '/api/v1/guides/reduce-food-waste', headers: { 'x-request-id': 'trace-one-1' } });
    expect(res.headers['x-request-id']).toBe('trace-one-1');
    const mine = lines.filter((line) => line.requestId === 'trace-one-1');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ level: 30, msg: 'request', method: 'GET', route: '/api/v1/guides/:slug', status: 200 });
    expect(typeof mine[0]!.durationMs).toBe('number');

    await app.inject({ url: '/nowhere', headers: { 'x-request-id': 'trace-two-2' } });
    expect(lines.filter((line) => line.requestId === 'trace-two-2')).toEqual([
      expect.objectContaining({ msg: 'request', route: '(unmatched)', status: 404 }),
    ]);
  });

  it('puts the generated request id of the response on the log line when the client sent none', async () => {
    const res = await app.inject({ url: '/api/v1/product' });
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.filter((line) => line.requestId === id)).toEqual([expect.objectContaining({ msg: 'request', status: 200 })]);
  });

  it('tags every line of a failing request, the error as well as the request line, with its id', async () => {
    const broken = createSqliteGuideStore(path.join(dir, 'broken.db'));
    await broken.close();
    const logged: LogLine[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logged.push(JSON.parse(line) as LogLine);
        callback();
      },
    });
    const config = loadConfig({ DATABASE_URL: `sqlite:${path.join(dir, 'broken.db')}`, PUBLIC_BASE_URL: TEST_BASE_URL });
    const failing = buildApp({ config, store: broken, logger: pino({ level: 'info' }, stream) });
    try {
      const res = await failing.inject({ url: '/api/v1/guides?q=menu', headers: { 'x-request-id': 'trace-db-down' } });
      expect(res.statusCode).toBe(503);
      const mine = logged.filter((line) => line.requestId === 'trace-db-down');
      expect(mine.map((line) => line.msg)).toEqual(['database unavailable', 'request']);
      expect(mine[0]!.level).toBe(50);
      expect(logged.filter((line) => line.msg === 'database unavailable' && line.requestId !== 'trace-db-down')).toEqual([]);
    } finally {
      await failing.close();
    }
  });

  it('never logs credentials, cookies or query text', async () => {
    await app.inject({
      url: '/api/v1/guides?q=my-private-search',
      headers: { authorization: 'Bearer sekrit-token', cookie: 'session=sekrit-cookie', 'x-request-id': 'trace-secret' },
    });
    const text = raw.join('\n');
    expect(text).not.toContain('sekrit');
    expect(text).not.toContain('my-private-search');
    expect(lines.filter((line) => line.requestId === 'trace-secret')).toHaveLength(1);
  });
});

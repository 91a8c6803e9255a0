/**
 * Searches on worker threads (src/store/sqlite/search/sqlite-search-pool.ts), beyond the store contract
 * (which runs whole against a store with workers): many searches in flight at once each get their
 * own page, searches that wait together are answered in one message, a page rendered on a worker
 * is the body the event loop would make of it (also when joined from the index's stored cards), an
 * import is seen by the workers, the pool is ready only once every worker is up (a search sent
 * before that waits for it), so is an index rebuilt by another store at open, workers run at
 * the priority asked for (also after a served file is replaced and reopened), closing lets queued
 * searches finish, a worker that dies fails only the searches it held and is replaced at the next
 * one, a database the workers cannot open answers "unavailable", and a script whose only work is a
 * search still exits (also when started with Node options that workers refuse, which they leave
 * out while keeping the others).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeCorpus } from '../../../../bench/corpus.js';
import { loadContentFolder } from '../../../../src/content/load-content.js';
import { createCursorCodec } from '../../../../src/guides/cursor.js';
import { parseSearchQuery } from '../../../../src/guides/search-query.js';
import { guideListBody } from '../../../../src/representation/guide-list-body.js';
import { loadRepresentationHash, representationHash } from '../../../../src/representation/representation.js';
import type { GuideStore } from '../../../../src/store/guide-store.js';
import { StoreUnavailableError } from '../../../../src/store/guide-store.js';
import { openSqliteDatabase } from '../../../../src/store/sqlite/sqlite-database.js';
import { createSqliteGuideStore } from '../../../../src/store/sqlite/sqlite-guide-store.js';
import type { SqliteGuideStore } from '../../../../src/store/sqlite/sqlite-guide-store.js';
import { createSearchPool } from '../../../../src/store/sqlite/search/sqlite-search-pool.js';
import { createWatchedSqliteStore } from '../../../../src/store/sqlite/sqlite-watched-store.js';
import type { SearchPriority } from '../../../../src/store/sqlite/search/sqlite-search-pool.js';
import type * as StartWorkerModule from '../../../../src/lib/start-worker.js';
import { makeTempDir } from '../../../helpers/build-test-app.js';
import { makeContent, makeGuide } from '../../../helpers/guide-factory.js';

// Every worker the pool starts, so that a test can end one as a crash would.
const started = vi.hoisted((): Worker[] => []);
vi.mock('../../../../src/lib/start-worker.js', async (importOriginal) => {
  const original = await importOriginal<typeof StartWorkerModule>();
  return {
    startWorker: (...args: Parameters<typeof original.startWorker>): Worker => {
      const worker = original.startWorker(...args);
      started.push(worker);
      return worker;
    },
  };
});

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..');
const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = makeTempDir('search-pool-');
  dirs.push(dir);
  return dir;
}

function open(file: string, searchWorkers: number): SqliteGuideStore {
  const store = createSqliteGuideStore(file, { searchWorkers });
  closers.push(() => store.close());
  return store;
}

/** The 200-guide generated corpus, imported, and opened once in this thread and once with `workers` search workers. */
async function corpusStores(workers: number): Promise<{ inThread: GuideStore; pooled: SqliteGuideStore }> {
  const dir = tempDir();
  const file = path.join(dir, 'guides.db');
  writeCorpus(path.join(dir, 'corpus'), { size: 200 });
  const loaded = await loadContentFolder(path.join(dir, 'corpus'));
  const inThread = open(file, 0);
  await inThread.importContent(loaded.content!);
  return { inThread, pooled: open(file, workers) };
}

const TEXTS = ['the', 'food kitchen', 'a', 'th', 'allergen', '"of the"', 'staff sch', 'the of and to', 'menu "the"', 'zzzz'];

describe('SQLite searches on worker threads', () => {
  it('answers many searches in flight at once, each with the page the calling thread would give', async () => {
    const { inThread, pooled } = await corpusStores(2);

    const requests = Array.from({ length: 60 }, (_, i) => ({ query: parseSearchQuery(TEXTS[i % TEXTS.length]!), limit: 1 + (i % 7) }));
    const expected = await Promise.all(requests.map((request) => inThread.searchPublishedGuides(request)));
    const answered = await Promise.all(requests.map((request) => pooled.searchPublishedGuides(request)));
    expect(answered).toEqual(expected);
    expect(answered.some((page) => page.items.length > 0)).toBe(true);
  });

  it('answers searches that wait together in one message, each with its own page', async () => {
    const { inThread, pooled } = await corpusStores(1);
    // The worker starts with the first search; then every message it sends is counted.
    await pooled.searchPublishedGuides({ query: parseSearchQuery('the'), limit: 1 });
    const worker = started.at(-1)!;
    let messages = 0;
    const count = (): void => {
      messages += 1;
    };
    worker.on('message', count);

    const requests = Array.from({ length: 40 }, (_, i) => ({ query: parseSearchQuery(TEXTS[i % TEXTS.length]!), limit: 2 + (i % 5) }));
    const expected = await Promise.all(requests.map((request) => inThread.searchPublishedGuides(request)));
    const answered = await Promise.all(requests.map((request) => pooled.searchPublishedGuides(request)));
    worker.off('message', count);
    expect(answered).toEqual(expected);
    // One message a search would wake the event loop 40 times; searches sent at once arrive
    // while earlier ones run, and their pages come back together.
    expect(messages).toBeGreaterThan(0);
    expect(messages).toBeLessThan(requests.length / 2);
  });

  it('renders a page on the worker as the body, hash, cursor and compressed bytes the event loop would make', async () => {
    const { inThread, pooled } = await corpusStores(1);
    const cursorKey = Buffer.alloc(32, 7);
    const codec = createCursorCodec([cursorKey]);
    const urlBase = 'https://guides.example';

    await loadRepresentationHash();
    let compressed = 0;
    for (const [i, text] of TEXTS.entries()) {
      const query = parseSearchQuery(text);
      const request = { query, limit: 1 + (i % 7) };
      const coding = (['br', 'gzip', undefined] as const)[i % 3];
      const page = await inThread.searchPublishedGuides(request);
      const nextCursor = page.next ? codec.encode({ kind: 'search', q: query.text, after: page.next }) : undefined;
      const expected = guideListBody(page.items, urlBase, nextCursor);

      const rendered = await pooled.searchPages!.renderSearchPage(request, { urlBase, cursorKey, ...(coding ? { coding } : {}) });
      expect(rendered.body.toString()).toBe(expected.toString());
      expect(rendered.hash).toBe(representationHash(expected));
      expect(rendered.nextCursor).toBe(nextCursor);
      if (coding === undefined || expected.length < 1024) {
        expect(rendered.encoded).toBeUndefined();
        continue;
      }
      compressed += 1;
      expect(rendered.encoded?.coding).toBe(coding);
      const decoded = coding === 'br' ? brotliDecompressSync(rendered.encoded!.body) : gunzipSync(rendered.encoded!.body);
      expect(decoded.equals(expected)).toBe(true);
    }
    expect(compressed).toBeGreaterThan(2);
  });

  it('renders pages from search cards as the same bytes as serializing them, whatever characters the summary fields hold', async () => {
    // Quotes, backslashes, control characters, the two line terminators JSON allows raw and
    // JavaScript did not, characters outside the BMP, `*` in a title, and no updatedAt (the
    // card says publishedAt); hits in the body, and in a title or tags only.
    const odd = 'say "oui" \\ back\\slash\ttab\u0001 \u2028\u2029 caf\u00e9 \u{1F35C} \u00ab\u00bb <b>&amp;</b> *star*';
    const dir = tempDir();
    const file = path.join(dir, 'guides.db');
    const inThread = open(file, 0);
    await inThread.importContent(
      makeContent([
        makeGuide({
          slug: 'odd-title',
          title: `Cooler ${odd}`,
          summary: `Walk-in ${odd}`,
          tags: [odd, 'cooler'],
          markdown: `# Cooler\n\nThe walk-in cooler ${odd}.\n`,
        }),
        makeGuide({
          slug: 'title-only',
          title: 'Cooler 🍜 "checks"',
          summary: 'Nothing \\ here',
          tags: ['ré"frigération'],
          markdown: '# Notes\n\nNothing to see.\n',
        }),
        makeGuide({
          slug: 'tags-only',
          title: 'Weekly',
          summary: 'Plain',
          tags: ['cooler', 'line\u2028break'],
          updatedAt: undefined,
          markdown: '# Notes\n\nPlain words.\n',
        }),
        ...Array.from({ length: 5 }, (_, i) =>
          makeGuide({ slug: `plain-${i}`, title: `Cooler ${i}`, markdown: `# Cooler ${i}\n\nA cooler, ${i} times.\n` }),
        ),
      ]),
    );
    const pooled = open(file, 1);
    const cursorKey = Buffer.alloc(32, 9);
    const codec = createCursorCodec([cursorKey]);
    const urlBase = 'https://guides.example/a "b"';
    let pages = 0;
    for (const text of ['cooler', 'oui', 'frig', 'checks', 'line', 'café 🍜']) {
      for (const limit of [1, 3, 20]) {
        const query = parseSearchQuery(text);
        const page = await inThread.searchPublishedGuides({ query, limit });
        const nextCursor = page.next ? codec.encode({ kind: 'search', q: query.text, after: page.next }) : undefined;
        const expected = guideListBody(page.items, urlBase, nextCursor);
        const rendered = await pooled.searchPages!.renderSearchPage({ query, limit }, { urlBase, cursorKey });
        expect(rendered.body.toString()).toBe(expected.toString());
        expect(rendered.nextCursor).toBe(nextCursor);
        if (page.items.length > 0) pages += 1;
      }
    }
    expect(pages).toBeGreaterThan(10);
    // And the fields are the guide's own.
    const rendered = await pooled.searchPages!.renderSearchPage({ query: parseSearchQuery('oui'), limit: 5 }, { urlBase, cursorKey });
    const list = JSON.parse(rendered.body.toString()) as { items: Record<string, unknown>[] };
    expect(list.items.map((item) => [item.slug, item.title, item.tags, item.url])).toEqual([
      ['odd-title', `Cooler ${odd}`, [odd, 'cooler'], `${urlBase}/api/v1/guides/odd-title`],
    ]);
    const tagsOnly = await pooled.searchPages!.renderSearchPage({ query: parseSearchQuery('line'), limit: 5 }, { urlBase, cursorKey });
    const [item] = (JSON.parse(tagsOnly.body.toString()) as { items: Record<string, unknown>[] }).items;
    expect(item).toMatchObject({ slug: 'tags-only', updatedAt: '2026-01-01T09:00:00Z', snippet: expect.stringContaining('**line') });
  });

  it('starts its workers when warmed or searched, fails only the searches a dead worker held, and answers the next one on a new worker', async () => {
    const file = path.join(tempDir(), 'guides.db');
    const writer = open(file, 0);
    await writer.importContent(makeContent([makeGuide({ slug: 'first', title: 'Walk-in cooler checks' })]));
    const before = started.length;
    const pool = createSearchPool(file, 1);
    closers.push(() => pool.close());
    // No worker before it is needed (a server warms its workers once it is ready).
    expect(started.length).toBe(before);
    pool.warm();
    expect(started.length).toBe(before + 1);
    const query = parseSearchQuery('cooler');
    expect((await pool.search({ query, limit: 5 })).items.map((item) => item.slug)).toEqual(['first']);
    expect(started.length).toBe(before + 1);

    // The worker ends as a crash would end it, with searches sent and unanswered.
    const held = Array.from({ length: 20 }, () =>
      pool.search({ query, limit: 5 }).then(
        () => 'answered',
        (error: unknown) => error,
      ),
    );
    await started.at(-1)!.terminate();
    const outcomes = await Promise.all(held);
    expect(outcomes.filter((outcome) => outcome !== 'answered').length).toBeGreaterThan(0);
    for (const outcome of outcomes.filter((o) => o !== 'answered')) expect(outcome).toBeInstanceOf(StoreUnavailableError);

    expect((await pool.search({ query, limit: 5 })).items.map((item) => item.slug)).toEqual(['first']);
    expect(started.length).toBe(before + 2);
  });

  it('is ready once every worker is up, answers a search sent before that, and is not ready again while a dead worker is replaced', async () => {
    const file = path.join(tempDir(), 'guides.db');
    const writer = open(file, 0);
    await writer.importContent(makeContent([makeGuide({ slug: 'first', title: 'Walk-in cooler checks' })]));
    const pool = createSearchPool(file, 2);
    closers.push(() => pool.close());
    // Asking starts the workers; neither is up at once.
    expect(pool.isReady()).toBe(false);
    const query = parseSearchQuery('cooler');
    expect((await pool.search({ query, limit: 5 })).items.map((item) => item.slug)).toEqual(['first']);
    await vi.waitFor(() => expect(pool.isReady()).toBe(true), { timeout: 20_000, interval: 10 });

    const dead = started.at(-1)!;
    await dead.terminate();
    expect(pool.isReady()).toBe(false);
    await vi.waitFor(() => expect(pool.isReady()).toBe(true), { timeout: 20_000, interval: 10 });
    expect((await pool.search({ query, limit: 5 })).items.map((item) => item.slug)).toEqual(['first']);
  });

  it('searches the new content once another connection has imported it', async () => {
    const file = path.join(tempDir(), 'guides.db');
    const writer = open(file, 0);
    await writer.importContent(makeContent([makeGuide({ slug: 'first', title: 'Walk-in cooler checks' })]));
    const pooled = open(file, 1);
    const query = parseSearchQuery('sourdough');
    expect((await pooled.searchPublishedGuides({ query, limit: 5 })).items).toEqual([]);

    await writer.importContent(
      makeContent([
        makeGuide({ slug: 'first', title: 'Walk-in cooler checks' }),
        makeGuide({ slug: 'second', title: 'Sourdough starter care' }),
      ]),
    );
    expect((await pooled.searchPublishedGuides({ query, limit: 5 })).items.map((item) => item.slug)).toEqual(['second']);
  });

  it('rebuilds an index of another format when a store opens the file, and moves the content version so that stores serving it reload', async () => {
    const file = path.join(tempDir(), 'guides.db');
    const serving = open(file, 1);
    await serving.importContent(makeContent([makeGuide({ slug: 'first', title: 'Walk-in cooler checks' })]));
    const query = parseSearchQuery('sourdough');
    expect((await serving.searchPublishedGuides({ query, limit: 5 })).items).toEqual([]);
    const version = await serving.contentVersion();

    // As another release left it: an index of format 4 (and a title the index has not seen, which
    // only a rebuild from the guides' rows finds).
    const raw = openSqliteDatabase(file);
    raw.prepare("UPDATE guides SET title = 'Sourdough starter care' WHERE slug = 'first'").run();
    const stats = JSON.parse(
      raw.prepare<[], { value: Buffer }>("SELECT value FROM search_meta WHERE key = 'stats'").get()!.value.toString(),
    ) as { format: number };
    raw.prepare("UPDATE search_meta SET value = ? WHERE key = 'stats'").run(Buffer.from(JSON.stringify({ ...stats, format: 4 })));
    raw.close();

    const upgraded = open(file, 0);
    expect(await upgraded.contentVersion()).toBe(version + 1);
    expect((await upgraded.searchPublishedGuides({ query, limit: 5 })).items.map((item) => item.slug)).toEqual(['first']);
    // The store that was serving all along reloads its index at the new version.
    expect((await serving.searchPublishedGuides({ query, limit: 5 })).items.map((item) => item.slug)).toEqual(['first']);
    // An index of the current format is left as it is.
    open(file, 0);
    expect(await upgraded.contentVersion()).toBe(version + 1);
  });

  // Linux's scheduling policy and nice value of each of this process's threads (/proc/self/task/*/stat,
  // fields 41 and 19): SCHED_OTHER is 0, SCHED_IDLE 5.
  function threadScheduling(): Map<string, { policy: number; nice: number }> {
    const threads = new Map<string, { policy: number; nice: number }>();
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        threads.set(tid, { policy: Number(fields[38]), nice: Number(fields[16]) });
      } catch {
        // The thread ended meanwhile.
      }
    }
    return threads;
  }

  const expected: [SearchPriority, { policy: number; nice: number }][] = [
    ['idle', { policy: 5, nice: 0 }],
    ['low', { policy: 0, nice: 10 }],
    ['normal', { policy: 0, nice: 0 }],
  ];
  it.runIf(existsSync('/proc/thread-self')).each(expected)(
    'runs its worker at the %s priority (Linux scheduling policy and nice value)',
    async (priority, scheduling) => {
      const file = path.join(tempDir(), 'guides.db');
      const store = createSqliteGuideStore(file, { searchWorkers: 1, searchPriority: priority });
      closers.push(() => store.close());
      await store.importContent(makeContent([makeGuide({ slug: 'first', title: 'Walk-in cooler checks' })]));
      const before = threadScheduling();
      expect((await store.searchPublishedGuides({ query: parseSearchQuery('cooler'), limit: 5 })).items).toHaveLength(1);
      const started = [...threadScheduling()].filter(([tid]) => !before.has(tid)).map(([, thread]) => thread);
      // The worker's thread, and no other new thread with a lowered priority.
      expect(started).toContainEqual(scheduling);
      expect(started.filter((thread) => thread.policy !== 0 || thread.nice !== 0)).toEqual(priority === 'normal' ? [] : [scheduling]);
      // The event loop's own thread keeps the normal priority.
      expect(threadScheduling().get(String(process.pid))).toEqual({ policy: 0, nice: 0 });
    },
  );

  it.runIf(existsSync('/proc/thread-self'))('keeps the search priority when a served file is replaced and reopened', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'guides.db');
    const replacement = path.join(dir, 'replacement.db');
    for (const [target, title] of [
      [file, 'Walk-in cooler checks'],
      [replacement, 'Cooler door seals'],
    ] as const) {
      const writer = createSqliteGuideStore(target);
      await writer.importContent(makeContent([makeGuide({ slug: 'first', title })]));
      await writer.close();
    }
    const store = createWatchedSqliteStore(file, { checkIntervalMs: 20, searchWorkers: 1, searchPriority: 'low' });
    closers.push(() => store.close());
    const query = parseSearchQuery('cooler');
    const titleFound = async (): Promise<string | undefined> =>
      (await store.searchPublishedGuides({ query, limit: 5 }).catch(() => ({ items: [] }))).items[0]?.title;
    expect(await titleFound()).toBe('Walk-in cooler checks');
    const before = threadScheduling();
    renameSync(replacement, file);
    for (let tries = 0; (await titleFound()) !== 'Cooler door seals'; tries += 1) {
      if (tries > 200) throw new Error('the replacement was never served');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The reopened store's worker: nice 10 (low), not the default SCHED_IDLE.
    const started = [...threadScheduling()].filter(([tid]) => !before.has(tid)).map(([, thread]) => thread);
    expect(started).toContainEqual({ policy: 0, nice: 10 });
    expect(started.filter((thread) => thread.policy !== 0)).toEqual([]);
  });

  it('lets searches already sent finish when it closes, and refuses later ones as unavailable', async () => {
    const file = path.join(tempDir(), 'guides.db');
    // close() gives a worker 2 s to finish. While other test files keep every CPU busy, a worker at
    // the idle priority gets no CPU, and starting one (this test's TypeScript compiled as it loads)
    // can take longer than that: the worker runs at the normal priority (the priorities have their
    // own tests above) and has started before the searches are sent.
    const store = createSqliteGuideStore(file, { searchWorkers: 1, searchPriority: 'normal' });
    await store.importContent(makeContent([makeGuide({ slug: 'first', title: 'Walk-in cooler checks' })]));
    const query = parseSearchQuery('cooler');
    await store.searchPublishedGuides({ query, limit: 5 });
    const pending = Array.from({ length: 10 }, () => store.searchPublishedGuides({ query, limit: 5 }));
    await store.close();
    for (const page of await Promise.all(pending)) expect(page.items.map((item) => item.slug)).toEqual(['first']);
    await expect(store.searchPublishedGuides({ query, limit: 5 })).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('answers "unavailable" when its workers cannot open the database', async () => {
    const pool = createSearchPool(path.join(tempDir(), 'missing.db'), 1);
    closers.push(() => pool.close());
    const search = pool.search({ query: parseSearchQuery('cooler'), limit: 5 });
    await expect(search).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(search).rejects.toThrow(/cannot be read/);
  });

  it('keeps a process alive while a search is pending, and lets it exit when idle', () => {
    const file = path.join(tempDir(), 'guides.db');
    const store = createSqliteGuideStore(file);
    closers.push(() => store.close());
    return store.importContent(makeContent([makeGuide({ slug: 'first', title: 'Walk-in cooler checks' })])).then(() => {
      // The built code, as `guides serve` runs it: a worker from the .js file. The script never
      // closes the pool: it must still print the page and exit by itself.
      const script = `
        const { createSearchPool } = await import(${JSON.stringify(path.join(ROOT, 'dist/store/sqlite/search/sqlite-search-pool.js'))});
        const { parseSearchQuery } = await import(${JSON.stringify(path.join(ROOT, 'dist/guides/search-query.js'))});
        const pool = createSearchPool(${JSON.stringify(file)}, 1);
        const page = await pool.search({ query: parseSearchQuery('cooler'), limit: 5 });
        console.log(page.items.map((item) => item.slug).join(','));`;
      const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 }).toString();
      expect(output.trim()).toBe('first');
      // A Node option a worker refuses (process-wide, as an operator may give `node`): workers start without it.
      const traced = execFileSync(process.execPath, ['--trace-gc', '--input-type=module', '-e', script], { timeout: 20_000 }).toString();
      expect(
        traced
          .trim()
          .split('\n')
          .filter((line) => !/Scavenge|Mark-Compact|Mark-Sweep/.test(line)),
      ).toEqual(['first']);
      // npm start's --max-semi-space-size (the worker's young generation is set by its resource
      // limits): left out of the worker's options, so the others (here --cpu-prof) still apply to it.
      const profiles = path.join(tempDir(), 'profiles');
      const profiled = execFileSync(
        process.execPath,
        ['--max-semi-space-size=4', '--cpu-prof', '--cpu-prof-dir', profiles, '--input-type=module', '-e', script],
        { timeout: 20_000 },
      ).toString();
      expect(profiled.trim()).toBe('first');
      expect(readdirSync(profiles).filter((name) => name.endsWith('.cpuprofile'))).toHaveLength(2);
    });
  });
});

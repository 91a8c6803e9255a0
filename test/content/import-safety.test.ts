/**
 * Data safety of `guides import`, run as users run it (a child process): an import that fails
 * half-way leaves the database exactly as it was. "Exactly" is a checksum of everything the store
 * serves (product, resources, content version, every published guide, every list page, searches),
 * taken through its public reads before and after.
 *
 * - A guide file made invalid, deleted or emptied while the import is reading the folder: the
 *   import refuses (exit 1, the file named) and nothing changes.
 * - The import killed with SIGKILL while it applies its transaction (SQLite: while it holds the
 *   write lock after validating; PostgreSQL: once its transaction has written on the server):
 *   nothing changes, the database is intact, and the next import works.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GuideStore } from '../../src/store/guide-store.js';
import { openSqliteDatabase } from '../../src/store/sqlite/sqlite-database.js';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { IMPORT_LOCK, LOCK_CLASS } from '../../src/store/postgres/postgres-schema.js';
import { createSqliteGuideStore } from '../../src/store/sqlite/sqlite-guide-store.js';
import { makeTempDir } from '../helpers/build-test-app.js';
import { createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const SAMPLE = path.join(ROOT, 'content');
const TINY = path.join(ROOT, 'test', 'fixtures', 'content-tiny');

const hasPostgres = await requirePostgres('the SIGKILL-during-import test on PostgreSQL');

const dirs: string[] = [];
function tempDir(): string {
  const dir = makeTempDir('guides-import-safety-');
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const WORDS = 'kitchen menu food staff allergen waste cost prep line cooler grill service table order supplier invoice'.split(' ');

/**
 * A content folder of `count` generated guides (about 8 KB of Markdown each), which also updates
 * two sample guides and drops the rest (so applying it creates, updates and archives).
 */
function writeBulkContent(dir: string, count: number): string[] {
  mkdirSync(path.join(dir, 'guides'), { recursive: true });
  cpSync(path.join(SAMPLE, 'product.yaml'), path.join(dir, 'product.yaml'));
  writeFileSync(
    path.join(dir, 'resources.yaml'),
    'links:\n  - rel: help\n    href: https://example.com/changed-help\n    title: Changed help\n',
  );
  for (const slug of ['reduce-food-waste', 'opening-a-cafe']) {
    writeFileSync(
      path.join(dir, 'guides', `${slug}.md`),
      `---\ntitle: Rewritten ${slug}\nsummary: Rewritten by the bulk import.\npublishedAt: 2026-05-01T00:00:00Z\n---\n\nRewritten body.\n`,
    );
  }
  const names: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const paragraphs = Array.from(
      { length: 40 },
      (_, p) =>
        `Paragraph ${p} of bulk guide ${i}: ${Array.from({ length: 15 }, (_, w) => WORDS[(i * 7 + p * 3 + w) % WORDS.length]).join(' ')} word${i}x${p}.`,
    );
    const name = `bulk-${String(i).padStart(5, '0')}.md`;
    writeFileSync(
      path.join(dir, 'guides', name),
      `---\ntitle: Bulk guide ${i}\nsummary: Generated guide number ${i}.\npublishedAt: 2025-01-01T00:00:00Z\ntags: [bulk]\n---\n\n# Bulk guide ${i}\n\n## Section\n\n${paragraphs.join('\n\n')}\n`,
    );
    names.push(name);
  }
  return names;
}

/** A checksum of everything the store serves, read through its public interface only. */
async function servedChecksum(store: GuideStore): Promise<{ checksum: string; guides: number }> {
  const hash = createHash('sha256');
  const add = (value: unknown): void => {
    hash.update(`${JSON.stringify(value)}\n`);
  };
  add(await store.contentVersion());
  add(await store.getProduct());
  add(await store.getResources());
  const index = await store.listPublishedIndex();
  add(index);
  for (const entry of index) add(await store.getPublishedGuide(entry.slug));
  let after: Awaited<ReturnType<GuideStore['listPublishedGuides']>>['next'];
  do {
    const page = await store.listPublishedGuides({ limit: 50, ...(after ? { after } : {}) });
    add(page.items);
    after = page.next;
  } while (after);
  for (const word of ['kitchen', 'menu', 'bulk', 'paragraph', 'rewritten', 'allergen']) {
    add(await store.searchPublishedGuides({ query: { text: word, terms: [{ words: [word], isPrefix: true }] }, limit: 50 }));
  }
  return { checksum: hash.digest('hex'), guides: index.length };
}

async function checksumOf(open: () => GuideStore): Promise<{ checksum: string; guides: number }> {
  const store = open();
  try {
    return await servedChecksum(store);
  } finally {
    await store.close();
  }
}

interface RunningImport {
  pid: number;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function startImport(dir: string, databaseUrl: string): RunningImport {
  const child = spawn(process.execPath, [CLI, 'import', dir], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    pid: child.pid!,
    done: new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))),
  };
}

async function runImport(dir: string, databaseUrl: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return startImport(dir, databaseUrl).done;
}

/** Polls until `probe` returns a value; fails when `isOver` says the moment has passed, or after a minute. */
async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, isOver: () => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (isOver()) throw new Error(`never saw ${what}: the import ended first (make the generated folder larger)`);
    if (Date.now() > deadline) throw new Error(`never saw ${what} within a minute`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The guide files the process has open right now (Linux /proc). */
function openGuideFiles(pid: number, guidesDir: string): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        return target.startsWith(guidesDir) ? [path.basename(target)] : [];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/**
 * True while `pid` holds SQLite's WAL write lock on `db` (byte 120 of the -shm file, a POSIX lock
 * listed in /proc/locks): from BEGIN IMMEDIATE until its commit is fully written.
 */
function holdsSqliteWriteLock(pid: number, db: string): boolean {
  let inode: number;
  try {
    inode = statSync(`${db}-shm`).ino;
  } catch {
    return false;
  }
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .some((line) => / POSIX +ADVISORY +WRITE /.test(line) && line.includes(` ${pid} `) && line.includes(`:${inode} 120 120`));
}

/**
 * Watches which guide file `pid` has open, in a tight synchronous loop (each file is open for only
 * tens of microseconds), until it is one that sorts before `before`: files are read in name
 * order, so the import is then mid-read and has not reached `before` yet.
 * ('~' sorts after every file name: any file will do.)
 */
function catchReading(pid: number, guidesDir: string, before: string): string {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const open = openGuideFiles(pid, guidesDir);
    const early = open.find((name) => name < before);
    if (early) return early;
    try {
      statSync(`/proc/${pid}`);
    } catch {
      break;
    }
  }
  throw new Error(`never saw the import reading a guide file before ${before} (make the generated folder larger)`);
}

describe('an import that fails half-way changes nothing', () => {
  // Built once: a database holding the sample content, its checksum, and the generated folders.
  let shared: string;
  let sampleDb: string;
  let before: { checksum: string; guides: number };
  let readingFolder: string;
  let readingNames: string[];
  let applyingFolder: string;
  beforeAll(async () => {
    shared = makeTempDir('guides-import-safety-shared-');
    sampleDb = path.join(shared, 'sample.db');
    const imported = await runImport(SAMPLE, `sqlite:${sampleDb}`);
    expect(imported.code, imported.stderr).toBe(0);
    before = await checksumOf(() => createSqliteGuideStore(sampleDb, { fileMustExist: true }));
    expect(before.guides).toBeGreaterThan(20);
    readingFolder = path.join(shared, 'reading');
    // Large enough that the importer, reading files on several threads, is still mid-folder when watched.
    readingNames = writeBulkContent(readingFolder, 5000);
    applyingFolder = path.join(shared, 'applying');
    writeBulkContent(applyingFolder, 2000);
  });
  afterAll(() => rmSync(shared, { recursive: true, force: true }));

  /** A copy of the sample database (closed, so fully checkpointed into the one file). */
  function sampleDatabase(): string {
    const db = path.join(tempDir(), 'g.db');
    cpSync(sampleDb, db);
    return db;
  }

  it.each([
    ['made invalid', (file: string) => writeFileSync(file, '---\ntitle: [unclosed\nstatus: nonsense\n---\nBroken.\n'), ''],
    ['deleted', (file: string) => rmSync(file), ': is unreadable'],
    ['emptied', (file: string) => writeFileSync(file, ''), ''],
  ] as const)('refuses when the last guide file is %s while the import is reading the folder', async (_how, damage, reported) => {
    const db = sampleDatabase();
    const content = path.join(tempDir(), 'next');
    cpSync(readingFolder, content, { recursive: true });
    const guidesDir = path.join(content, 'guides');
    const last = readingNames.at(-1)!;
    const running = startImport(content, `sqlite:${db}`);
    // Mid-run: the importer has a file open that comes well before the last one.
    // A margin of 100 files: the damage lands microseconds later, long before the reader gets there.
    const reading = catchReading(running.pid, guidesDir, readingNames.at(-100)!);
    damage(path.join(guidesDir, last));
    const result = await running.done;

    expect(reading < last).toBe(true);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('nothing was changed');
    expect(result.stderr).toContain(`guides/${last}${reported}`);
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(await checksumOf(() => createSqliteGuideStore(db, { fileMustExist: true }))).toEqual(before);
  });

  it('keeps the SQLite database exactly as before when the import is killed with SIGKILL while applying', async () => {
    const db = sampleDatabase();
    const url = `sqlite:${db}`;
    const content = applyingFolder;
    const running = startImport(content, url);
    let ended = false;
    void running.done.then(() => (ended = true));
    // Migration takes the write lock briefly (and writes nothing: the database is up to date); the
    // import's transaction holds it while it reads the folder and writes each guide, which grows
    // the log. Kill it then, with guides written and the commit still to come.
    const walSize = (): number => statSync(`${db}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    const walAtStart = walSize();
    await waitFor(
      () => (holdsSqliteWriteLock(running.pid, db) && walSize() > walAtStart ? true : undefined),
      () => ended,
      'the import write guides in its transaction',
    );
    process.kill(running.pid, 'SIGKILL');
    const result = await running.done;
    expect(result.signal).toBe('SIGKILL');
    expect(result.stdout).not.toContain('Imported');

    const after = await checksumOf(() => createSqliteGuideStore(db, { fileMustExist: true }));
    expect(after).toEqual(before);
    const raw = openSqliteDatabase(db, { fileMustExist: true, readonly: true });
    try {
      expect(raw.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    } finally {
      raw.close();
    }
    // Nothing was left locked or half-written: the next import applies normally.
    const next = await runImport(TINY, url);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain('2 created');
  });

  it('leaves a new SQLite database empty and intact when its first import is killed with SIGKILL while applying', async () => {
    const emptyDb = path.join(tempDir(), 'empty.db');
    const empty = await checksumOf(() => createSqliteGuideStore(emptyDb));
    const db = path.join(tempDir(), 'g.db');
    const url = `sqlite:${db}`;
    const running = startImport(readingFolder, url);
    let ended = false;
    void running.done.then(() => (ended = true));
    // A first import writes through a rollback journal, not the log: kill it once the journal exists
    // and the database file has grown by a megabyte (pages written in place, the risky moment).
    const size = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? -1;
    const migrated = await waitFor(
      () => (size(`${db}-journal`) >= 0 ? size(db) : undefined),
      () => ended,
      'the import open its rollback journal',
    );
    await waitFor(
      () => (size(`${db}-journal`) >= 0 && size(db) > migrated + 1_000_000 ? true : undefined),
      () => ended,
      'the import write pages into the database file',
    );
    process.kill(running.pid, 'SIGKILL');
    const result = await running.done;
    expect(result.signal).toBe('SIGKILL');

    // The next connection rolls the journal back: the database is as the migration left it.
    expect(await checksumOf(() => createSqliteGuideStore(db, { fileMustExist: true }))).toEqual(empty);
    const raw = openSqliteDatabase(db, { fileMustExist: true, readonly: true });
    try {
      expect(raw.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
      expect(raw.prepare('SELECT count(*) FROM guides').pluck().get()).toBe(0);
      expect(raw.prepare('PRAGMA journal_mode').pluck().get()).toBe('wal');
    } finally {
      raw.close();
    }
    const next = await runImport(TINY, url);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain('2 created');
  });

  it.runIf(hasPostgres)(
    'keeps the PostgreSQL database exactly as before when the import is killed with SIGKILL while applying',
    async () => {
      const database = await createTestDatabase();
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      try {
        expect((await runImport(SAMPLE, database.url)).code).toBe(0);
        const open = (): GuideStore => createPostgresGuideStore({ connectionString: database.url, poolSize: 2 });
        const pgBefore = await checksumOf(open);
        const running = startImport(applyingFolder, database.url);
        let ended = false;
        void running.done.then(() => (ended = true));
        // The apply transaction is open on the server once a backend of ours holds the import's advisory
        // lock (migration, which may write too, holds another) and has written in it.
        await waitFor(
          async () => {
            const { rows } = await admin.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2
              AND a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_xid IS NOT NULL`,
              [LOCK_CLASS, IMPORT_LOCK],
            );
            return rows[0]!.n > 0 ? true : undefined;
          },
          () => ended,
          'the import transaction open on the server',
        );
        process.kill(running.pid, 'SIGKILL');
        const result = await running.done;
        expect(result.signal).toBe('SIGKILL');

        // The server rolls the dead client's transaction back; wait until its backend is gone.
        await waitFor(
          async () => {
            const { rows } = await admin.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
            );
            return rows[0]!.n === 0 ? true : undefined;
          },
          () => false,
          "the killed import's backend end",
        );
        expect(await checksumOf(open)).toEqual(pgBefore);
        const next = await runImport(TINY, database.url);
        expect(next.code, next.stderr).toBe(0);
      } finally {
        await admin.end();
        await database.drop();
      }
    },
  );
});

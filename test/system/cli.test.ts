/** The `guides` command as users run it: a child process on temporary folders and databases. */
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresGuideStore } from '../../src/store/postgres/postgres-guide-store.js';
import { createSqliteGuideStore } from '../../src/store/sqlite/sqlite-guide-store.js';
import { makeTempDir } from '../helpers/build-test-app.js';
import { CLI, guides, ROOT, storeSnapshot } from '../helpers/cli.js';
import { POSTGRES_ADMIN_URL, createTestDatabase, requirePostgres } from '../helpers/postgres-database.js';
import { freePort } from '../helpers/redis-server.js';

const run = promisify(execFile);
const FIXTURES = path.join(ROOT, 'test', 'fixtures');

const snapshot = storeSnapshot;

const dirs: string[] = [];
function tempDir(): string {
  const dir = makeTempDir('guides-cli-');
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('guides import', () => {
  beforeAll(() => {
    expect(readFileSync(CLI, 'utf8')).toContain('guides');
  });

  it('imports a folder, then finds everything unchanged on the second run', async () => {
    const db = path.join(tempDir(), 'g.db');
    const first = await guides(['import', path.join(FIXTURES, 'content-tiny')], { DATABASE_URL: `sqlite:${db}` });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Imported 2 guide file(s): 2 created, 0 updated, 0 unchanged, 0 moved between states.');
    expect(first.stdout).toContain('created: first-guide, second-guide');
    expect(first.stdout).toContain('Content version: 1.');
    const before = await snapshot(db);
    const second = await guides(['import', path.join(FIXTURES, 'content-tiny')], { DATABASE_URL: `sqlite:${db}` });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('0 created, 0 updated, 2 unchanged, 0 moved between states.');
    expect(second.stdout).toContain('Content version: 1.');
    expect(await snapshot(db)).toBe(before);
  });

  it('refuses a folder with problems, lists each with file and field, and changes nothing', async () => {
    const db = path.join(tempDir(), 'g.db');
    await guides(['import', path.join(FIXTURES, 'content-tiny')], { DATABASE_URL: `sqlite:${db}` });
    const before = await snapshot(db);
    const result = await guides(['import', path.join(FIXTURES, 'content-broken')], { DATABASE_URL: `sqlite:${db}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Import refused: 18 problem(s) found; nothing was changed.');
    expect(result.stderr).toContain('guides/bad-fields.md [status]: must be one of: published, retained, archived');
    expect(result.stderr).toContain('guides/duplicate-b.md [slug]: is already used by guides/duplicate-a.md');
    expect(result.stderr).toContain('product.yaml [description]: is required');
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(await snapshot(db)).toBe(before);
  });

  it('archives guides that left the folder and reports moves between states', async () => {
    const dir = tempDir();
    const content = path.join(dir, 'content');
    cpSync(path.join(FIXTURES, 'content-tiny'), content, { recursive: true });
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'g.db')}` };
    await guides(['import', content], env);
    rmSync(path.join(content, 'guides', 'first-guide.md'));
    const second = path.join(content, 'guides', 'second-guide.md');
    writeFileSync(second, readFileSync(second, 'utf8').replace('status: published', 'status: retained'));
    const result = await guides(['import', content], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('moved: second-guide (published → retained)');
    expect(result.stdout).toContain('moved: first-guide (published → archived)');
    const store = createSqliteGuideStore(path.join(dir, 'g.db'));
    try {
      expect(await store.listPublishedIndex()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('shows a progress bar when importing many files on a terminal', async () => {
    const dir = tempDir();
    cpSync(path.join(FIXTURES, 'content-tiny'), dir, { recursive: true });
    for (let i = 0; i < 60; i += 1) {
      writeFileSync(
        path.join(dir, 'guides', `bulk-${i}.md`),
        `---\ntitle: Bulk ${i}\nsummary: Bulk guide.\npublishedAt: 2026-01-01\n---\nText ${i}.\n`,
      );
    }
    // `script` gives the child a pseudo-terminal, as a person's shell would.
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} import ${JSON.stringify(dir)}`;
    const result = await run('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${path.join(dir, 'g.db')}` },
    });
    // The bar covers the whole import: files read, validated and written, their rate, then the commit.
    expect(result.stdout).toMatch(/Importing .* 62\/62 files \| \d+ files\/s \| done/);
    expect(result.stdout).toContain('62 created');
    // Not on a terminal: no bar at all.
    rmSync(path.join(dir, 'g.db'));
    const quiet = await guides(['import', dir], { DATABASE_URL: `sqlite:${path.join(dir, 'g.db')}` });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).not.toContain('Importing');
  });

  it('--dry-run prints the plan and writes nothing', async () => {
    const dir = tempDir();
    const content = path.join(dir, 'content');
    cpSync(path.join(FIXTURES, 'content-tiny'), content, { recursive: true });
    const db = path.join(dir, 'g.db');
    const env = { DATABASE_URL: `sqlite:${db}` };
    // Against a database that does not exist yet: the plan of a first import, and no file made.
    const first = await guides(['import', content, '--dry-run'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      'Dry run, nothing written: importing 2 guide file(s) would give 2 created, 0 updated, 0 unchanged, 0 moved between states.',
    );
    expect(first.stdout).toContain('created: first-guide, second-guide');
    expect(first.stdout).toContain('Content version after the import: 1.');
    expect(existsSync(db)).toBe(false);

    await guides(['import', content], env);
    const before = await snapshot(db);
    const bytes = readFileSync(db);
    rmSync(path.join(content, 'guides', 'first-guide.md'));
    const second = path.join(content, 'guides', 'second-guide.md');
    writeFileSync(second, readFileSync(second, 'utf8').replace('status: published', 'status: retained'));
    writeFileSync(
      path.join(content, 'guides', 'third-guide.md'),
      '---\ntitle: Third\nsummary: Added.\npublishedAt: 2026-03-01\n---\nText.\n',
    );
    const plan = await guides(['import', content, '--dry-run'], env);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('would give 1 created, 1 updated, 0 unchanged, 2 moved between states.');
    expect(plan.stdout).toContain('moved: second-guide (published → retained)');
    expect(plan.stdout).toContain('moved: first-guide (published → archived)');
    expect(plan.stdout).toContain('Content version after the import: 2.');
    expect(await snapshot(db)).toBe(before);
    expect(readFileSync(db).equals(bytes)).toBe(true);

    // The plan is what the import then does.
    const applied = await guides(['import', content], env);
    expect(applied.stdout).toContain('Imported 2 guide file(s): 1 created, 1 updated, 0 unchanged, 2 moved between states.');
    expect(applied.stdout).toContain('Content version: 2.');

    // A broken folder: refused as an import is, every problem listed.
    writeFileSync(path.join(content, 'guides', 'broken.md'), '---\nsummary: No title.\n---\nText.\n');
    const broken = await guides(['import', content, '--dry-run'], env);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('guides/broken.md [title]: is required');
  });
});

describe('guides (other commands)', () => {
  it('migrates a new database and says so', async () => {
    const result = await guides(['migrate'], { DATABASE_URL: `sqlite:${path.join(tempDir(), 'new', 'g.db')}` });
    expect(result).toMatchObject({ code: 0, stdout: 'Database schema is up to date.\n' });
  });

  it('reports every configuration problem at once, readably', async () => {
    const result = await guides(['migrate'], {
      PORT: 'abc',
      RATE_LIMIT_PER_MINUTE: '-1',
      TRUST_PROXY: 'true',
      DATABASE_URL: 'mysql://x',
      SEARCH_PRIORITY: 'high',
      RESPONSE_CACHE_MB: '16MB',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration:');
    for (const name of ['PORT', 'RATE_LIMIT_PER_MINUTE', 'TRUST_PROXY', 'DATABASE_URL', 'RESPONSE_CACHE_MB'])
      expect(result.stderr).toContain(`- ${name}`);
    expect(result.stderr).toContain('- SEARCH_PRIORITY must be one of: idle, low, normal');
  });

  it('answers usage errors with exit 2 and where to read the usage', async () => {
    for (const [args, said] of [
      [['frobnicate'], 'guides: unknown command: frobnicate; the commands are serve, import, migrate'],
      [['import'], 'guides import: import takes exactly one argument: the content folder'],
      [['import', 'a', 'b'], 'guides import: import takes exactly one argument: the content folder'],
      [['migrate', '--workers', '2'], 'guides migrate: unknown option --workers; the options are --help'],
      [['serve', '--wokers', '2'], 'guides serve: unknown option --wokers; did you mean --workers?'],
      [['import', 'content', '--dryrun'], 'guides import: unknown option --dryrun; did you mean --dry-run?'],
      [['serve', '--watch', '--workers', '2'], 'guides serve: --watch runs one process: leave out --workers'],
      [['--nope'], 'guides: unknown option --nope; the options are --help, --version'],
    ] as const) {
      const result = await guides([...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(said);
      expect(result.stderr, args.join(' ')).toMatch(/Run guides( \w+)? --help for its usage\./);
    }
    expect((await guides([])).code).toBe(2);
    expect((await guides(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('gives each command its own help: arguments, options, the variables it reads, exit codes', async () => {
    const general = await guides(['--help']);
    expect(general.code).toBe(0);
    for (const command of ['serve', 'import <dir>', 'migrate']) expect(general.stdout).toContain(`  ${command}`);
    const helps = new Map<string, string>();
    for (const command of ['serve', 'import', 'migrate']) {
      const help = await guides([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(new RegExp(`^Usage: guides ${command}`));
      expect(help.stdout, command).toContain('Exit codes: 0 done, 1 refused or failed (the reason on stderr), 2 usage error.');
      expect((await guides(['help', command])).stdout, command).toBe(help.stdout);
      helps.set(command, help.stdout);
    }
    expect(helps.get('serve')).toMatch(/--watch[\s\S]*Reads: DATABASE_URL, PORT, HOST, PUBLIC_BASE_URL, CONTENT_DIR/);
    expect(helps.get('import')).toMatch(/Usage: guides import <dir> \[--dry-run\][\s\S]*Reads: DATABASE_URL\./);
    expect(helps.get('migrate')).not.toContain('--dry-run');
  });

  it('refuses serve --watch on PostgreSQL, saying why', async () => {
    const result = await guides(['serve', '--watch'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/guides' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--watch works on the embedded database only');
  });

  // Node 22.1+ (production's runtimes); Node 20 has no compile cache and the CLI goes without.
  it.runIf(typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function')(
    "keeps Node's compile cache beside its packages",
    async () => {
      const cache = path.join(ROOT, 'node_modules', '.cache', 'guides-compile-cache');
      // A folder per Node version and set of V8 flags (other tests start the CLI with other flags).
      const ours = (): string[] => readdirSync(cache).filter((name) => name.startsWith(`${process.version}-`));
      // This Node's folders from earlier runs go first, so that only this run can fill them (another
      // test starting the CLI meanwhile goes through the same code; the cache is only ever a cache).
      // Such a CLI may write into a folder while it is being removed (ENOTEMPTY, seen in CI with test
      // files in parallel): the removal is tried again then.
      for (const folder of existsSync(cache) ? ours() : [])
        rmSync(path.join(cache, folder), { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
      expect((await guides(['migrate'], { DATABASE_URL: `sqlite:${path.join(tempDir(), 'g.db')}` })).code).toBe(0);
      const folders = ours();
      expect(Math.max(...folders.map((folder) => readdirSync(path.join(cache, folder)).length))).toBeGreaterThan(10);
    },
  );
});

describe.runIf(await requirePostgres('the CLI import into PostgreSQL'))('guides import into PostgreSQL', () => {
  it('streams a folder in, finds it unchanged, refuses a folder whose problem comes last, and archives what left', async () => {
    const database = await createTestDatabase();
    try {
      const env = { DATABASE_URL: database.url };
      const content = path.join(tempDir(), 'content');
      cpSync(path.join(FIXTURES, 'content-tiny'), content, { recursive: true });
      // More files than one statement writes and than the reader keeps in this thread: the import's real path.
      for (let i = 0; i < 300; i += 1) {
        writeFileSync(
          path.join(content, 'guides', `bulk-${String(i).padStart(3, '0')}.md`),
          `---\ntitle: Bulk ${i}\nsummary: Bulk guide.\npublishedAt: 2026-01-01\n---\nText ${i}.\n`,
        );
      }
      const first = await guides(['import', content], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain('Imported 302 guide file(s): 302 created, 0 updated, 0 unchanged, 0 moved between states.');
      expect(first.stdout).toContain('Content version: 1.');
      const before = await snapshot(database.url);
      const second = await guides(['import', content], env);
      expect(second.stdout).toContain('0 created, 0 updated, 302 unchanged, 0 moved between states.');
      expect(second.stdout).toContain('Content version: 1.');
      expect(await snapshot(database.url)).toBe(before);

      // Every other guide was read, and written in the transaction, before the last file's problem.
      const secondGuide = path.join(content, 'guides', 'second-guide.md');
      writeFileSync(secondGuide, readFileSync(secondGuide, 'utf8').replace('status: published', 'status: retained'));
      writeFileSync(path.join(content, 'guides', 'zz-broken.md'), '---\nsummary: No title.\npublishedAt: 2026-01-01\n---\nText.\n');
      const broken = await guides(['import', content], env);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toContain('Import refused: 1 problem(s) found; nothing was changed.');
      expect(broken.stderr).toContain('guides/zz-broken.md [title]: is required');
      expect(await snapshot(database.url)).toBe(before);

      rmSync(path.join(content, 'guides', 'zz-broken.md'));
      rmSync(path.join(content, 'guides', 'first-guide.md'));
      const third = await guides(['import', content], env);
      expect(third.code, third.stderr).toBe(0);
      expect(third.stdout).toContain('Imported 301 guide file(s): 0 created, 1 updated, 300 unchanged, 2 moved between states.');
      expect(third.stdout).toContain('moved: second-guide (published → retained)');
      expect(third.stdout).toContain('moved: first-guide (published → archived)');
      expect(third.stdout).toContain('Content version: 2.');
      const store = createPostgresGuideStore({ connectionString: database.url, poolSize: 1 });
      try {
        expect((await store.listPublishedIndex()).length).toBe(300);
        expect((await store.existingGuides()).find((row) => row.slug === 'first-guide')?.status).toBe('archived');
      } finally {
        await store.close();
      }
    } finally {
      await database.drop();
    }
  });
});

describe.runIf(await requirePostgres("the CLI's PostgreSQL connection errors"))('guides on a PostgreSQL URL it cannot use', () => {
  const urlWith = (change: (url: URL) => void): string => {
    const url = new URL(POSTGRES_ADMIN_URL);
    change(url);
    return url.toString();
  };
  const server = (url: string): string => `PostgreSQL at ${new URL(url).hostname}:${new URL(url).port || '5432'}`;

  it('plans a dry run against PostgreSQL too, writing no content', async () => {
    const database = await createTestDatabase();
    try {
      const env = { DATABASE_URL: database.url };
      const content = path.join(tempDir(), 'content');
      cpSync(path.join(FIXTURES, 'content-tiny'), content, { recursive: true });
      expect((await guides(['import', content], env)).code).toBe(0);
      writeFileSync(
        path.join(content, 'guides', 'third-guide.md'),
        '---\ntitle: Third\nsummary: Added.\npublishedAt: 2026-03-01\n---\nText.\n',
      );
      for (let run = 0; run < 2; run += 1) {
        const plan = await guides(['import', content, '--dry-run'], env);
        expect(plan.stdout).toContain('would give 1 created, 0 updated, 2 unchanged, 0 moved between states.');
        expect(plan.stdout).toContain('Content version after the import: 2.');
      }
      expect((await guides(['import', content], env)).stdout).toContain('Content version: 2.');
    } finally {
      await database.drop();
    }
  });

  it('says the server refused the connection, with host, port and database', async () => {
    const port = await freePort();
    const url = urlWith((u) => {
      u.port = String(port);
      u.pathname = '/guides_somewhere';
    });
    const result = await guides(['migrate'], { DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`PostgreSQL at ${new URL(url).hostname}:${port} refused the connection`);
    expect(result.stderr).toContain('database "guides_somewhere"');
  });

  it('says the database does not exist', async () => {
    const url = urlWith((u) => {
      u.pathname = `/guides_missing_${process.pid}`;
    });
    const result = await guides(['migrate'], { DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${server(url)} has no database "guides_missing_${process.pid}" (SQLSTATE 3D000)`);
  });

  it('says authentication failed, naming the user but never the password', async () => {
    // A role that does not exist fails authentication (28000) even where trust accepts any existing one.
    const url = urlWith((u) => {
      u.username = 'guides_no_such_role';
      u.password = 'hunter2-secret';
    });
    const result = await guides(['serve'], { DATABASE_URL: url, PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `${server(url).replaceAll('.', '\\.')} refused user "guides_no_such_role" for database "[^"]+": authentication failed \\(SQLSTATE 28(000|P01)\\)`,
      ),
    );
    expect(result.stderr + result.stdout).not.toContain('hunter2');
  });
});

describe('guides serve', () => {
  it('imports CONTENT_DIR into an empty database, serves it, picks up an import by another process, and stops on SIGTERM', async () => {
    const dir = tempDir();
    const content = path.join(dir, 'content');
    cpSync(path.join(FIXTURES, 'content-tiny'), content, { recursive: true });
    // A port the system reports free (a random one can collide with another connection's local port).
    const port = await freePort();
    const env = {
      PATH: process.env.PATH!,
      DATABASE_URL: `sqlite:${path.join(dir, 'g.db')}`,
      CONTENT_DIR: content,
      PORT: String(port),
      LOG_LEVEL: 'warn',
    };
    const server = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      let list: { items: { slug: string }[] } | undefined;
      for (let i = 0; i < 100 && !list; i += 1) {
        list = await fetch(`${base}/api/v1/guides`).then(
          (r) => r.json() as Promise<{ items: { slug: string }[] }>,
          () => undefined,
        );
        if (!list) await new Promise((r) => setTimeout(r, 100));
      }
      expect(list!.items.map((g) => g.slug)).toEqual(['second-guide', 'first-guide']);

      writeFileSync(
        path.join(content, 'guides', 'third-guide.md'),
        '---\ntitle: Third\nsummary: Added later.\npublishedAt: 2026-03-01\n---\nNew text.\n',
      );
      const imported = await guides(['import', content], { DATABASE_URL: env.DATABASE_URL });
      expect(imported.code).toBe(0);
      const importedAt = Date.now();
      let status = 0;
      while (status !== 200 && Date.now() - importedAt < 5000) {
        status = (await fetch(`${base}/api/v1/guides/third-guide`)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});

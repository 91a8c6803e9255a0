/**
 * How long after an import commits every instance serves the new content. Starts two
 * `guides serve` processes (dist/, so `npm run build` first) on a fresh PostgreSQL database,
 * imports a changed folder through the CLI several times, watches the content version in the
 * database every 2 ms (the commit) and polls both instances every 10 ms.
 *
 * Usage: `tsx bench/propagation.ts [--rounds 5]` (TEST_POSTGRES_URL as for the tests).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { createTestDatabase } from '../test/helpers/postgres-database.js';
import { freePort } from './lib/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const database = await createTestDatabase();
const dir = mkdtempSync(path.join(tmpdir(), 'guides-propagation-'));
const content = path.join(dir, 'content');
cpSync(path.join(ROOT, 'content'), content, { recursive: true });
const env = { PATH: process.env.PATH, DATABASE_URL: database.url, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: 'https://guides.example.test' };
const ports = [await freePort(), await freePort()];
const watcher = new pg.Client({ connectionString: database.url });
await watcher.connect();
const contentVersion = async (): Promise<string | undefined> =>
  (await watcher.query<{ value: string }>("SELECT value FROM meta WHERE key = 'content_version'").catch(() => ({ rows: [] }))).rows[0]
    ?.value;
const servers = ports.map((port) => spawn(process.execPath, [CLI, 'serve'], { env: { ...env, PORT: String(port) }, stdio: 'ignore' }));
try {
  execFileSync(process.execPath, [CLI, 'import', content], { env, stdio: 'ignore' });
  for (const port of ports) {
    while (
      (await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    )
      await sleep(50);
    await fetch(`http://127.0.0.1:${port}/api/v1/guides`);
  }
  const delays: number[] = [];
  for (let round = 1; round <= Number(values.rounds); round += 1) {
    const slug = `propagation-${round}`;
    writeFileSync(
      path.join(content, 'guides', `${slug}.md`),
      `---\ntitle: Round ${round}\nsummary: A new guide.\npublishedAt: 2030-05-0${(round % 9) + 1}\n---\nText.\n`,
    );
    // Let the import land anywhere in the poll cycle.
    await sleep(Math.random() * 1000);
    const before = await contentVersion();
    const importing = promisify(execFile)(process.execPath, [CLI, 'import', content], { env });
    while ((await contentVersion()) === before) await sleep(2);
    const committed = performance.now();
    // The first list page is cached per content version (a new guide's own URL is not: 404s are
    // never cached), so it shows when the instance noticed the new version.
    await Promise.all(
      ports.map(async (port) => {
        while (!(await (await fetch(`http://127.0.0.1:${port}/api/v1/guides`)).text()).includes(`"${slug}"`)) await sleep(10);
      }),
    );
    delays.push(performance.now() - committed);
    await importing;
  }
  const sorted = [...delays].sort((a, b) => a - b);
  console.log(
    `visible on both instances after the import committed (ms): ${delays.map((d) => d.toFixed(0)).join(', ')}; ` +
      `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)} (CONTENT_POLL_MS default 1000)`,
  );
} finally {
  for (const server of servers) server.kill('SIGTERM');
  await watcher.end();
  await sleep(500);
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
}

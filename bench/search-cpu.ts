/**
 * The embedded search's CPU time a search, in process (no HTTP, no worker), for each kind of
 * bench/searches.ts, this checkout's build against a committed ref's, in alternating rounds
 * (ref, this, this, ref, …) so that both see the same minutes of a shared machine. Prints, per kind,
 * the median over rounds of the time a search takes to rank (search(): the hits of a page and one
 * more) and to make its page (searchPage(): hits, summaries and snippets), and the median of each
 * round's ratio (this ÷ ref). Also checks that both builds give the same hits for every search.
 *
 * Usage: `tsx bench/search-cpu.ts --corpus bench/.cache/corpus-10000-v3 [--ref main] [--queries 200]
 * [--rounds 7] [--no-build]`. Each build imports the content folder with its own CLI into
 * bench/.cache/search-cpu/ (once; delete the file to import again), as the benchmark does: a
 * database whose index was rebuilt in place instead has its search rows scattered over freed
 * pages, and its pages cost more to read.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './lib/measure.js';
import { SEARCH_KINDS, searchPaths } from './searches.js';
import type { SearchKind } from './searches.js';
import type Database from 'better-sqlite3';
import { openSqliteDatabase } from '../src/store/sqlite/sqlite-database.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CACHE = path.join(ROOT, 'bench', '.cache');

const { values } = parseArgs({
  options: {
    corpus: { type: 'string' },
    ref: { type: 'string', default: 'main' },
    queries: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '7' },
    'no-build': { type: 'boolean', default: false },
  },
});
if (!values.corpus) throw new Error('--corpus <content folder> is required');
const corpus = path.resolve(values.corpus);

interface Hit {
  docno: number;
  score: number;
}
interface SearchModule {
  createSqliteSearch(db: Database.Database): { warm(): void; search(query: unknown, count: number, after: undefined): { hits: Hit[] } };
  searchPage(search: unknown, options: { query: unknown; limit: number }): unknown;
}
interface Build {
  label: string;
  search: ReturnType<SearchModule['createSqliteSearch']>;
  page(query: unknown, limit: number): unknown;
  parse(text: string): unknown;
}

/** A committed ref exported and built apart (as `npm run bench -- --ref` does), or this checkout's dist/. */
function buildDir(ref: string | undefined): string {
  if (!ref) {
    if (!values['no-build']) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    return ROOT;
  }
  const sha = execFileSync('git', ['rev-parse', ref], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = path.join(CACHE, `ref-${sha.slice(0, 12)}`);
  if (!existsSync(path.join(dir, 'dist', 'cli.js'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C "${dir}"`], { cwd: ROOT });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
  }
  return dir;
}

async function openBuild(label: string, dir: string): Promise<Build> {
  const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(path.join(dir, 'dist', file)).href)) as T;
  const { parseSearchQuery } = await load<{ parseSearchQuery(text: string): unknown }>('guides/search-query.js');
  // Builds from before the engine got its folder (issue 48) have it one level up.
  const engine = existsSync(path.join(dir, 'dist', 'store/sqlite/search/sqlite-search.js'))
    ? 'store/sqlite/search/sqlite-search.js'
    : 'store/sqlite/sqlite-search.js';
  const searchModule = await load<SearchModule>(engine);
  // Per build: a ref's by its commit; this checkout's one file (delete it after changing the import or the index format).
  const db = path.join(CACHE, 'search-cpu', `${dir === ROOT ? 'this-checkout' : path.basename(dir)}-${path.basename(corpus)}.db`);
  if (!existsSync(db)) {
    mkdirSync(path.dirname(db), { recursive: true });
    console.log(`importing ${corpus} with ${label}`);
    execFileSync(process.execPath, [path.join(dir, 'dist', 'cli.js'), 'import', corpus], {
      env: { ...process.env, DATABASE_URL: `sqlite:${db}.tmp`, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const handle = openSqliteDatabase(`${db}.tmp`);
    handle.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    handle.close();
    renameSync(`${db}.tmp`, db);
  }
  const search = searchModule.createSqliteSearch(openSqliteDatabase(db, { readonly: true }));
  search.warm();
  return {
    label,
    search,
    page: (query, limit) => searchModule.searchPage(search, { query, limit }),
    parse: parseSearchQuery,
  };
}

const ref = await openBuild(`ref ${values.ref}`, buildDir(values.ref));
const own = await openBuild('this checkout', buildDir(undefined));
const builds = [ref, own];
const searches = Object.fromEntries(
  SEARCH_KINDS.map((kind) => [
    kind,
    searchPaths(kind, Number(values.queries)).map((p) => {
      const url = new URL(p, 'http://bench');
      return { text: url.searchParams.get('q') as string, limit: Number(url.searchParams.get('limit') ?? 20) };
    }),
  ]),
) as Record<SearchKind, { text: string; limit: number }[]>;

// Same hits from both builds, for every search.
let differing = 0;
for (const kind of SEARCH_KINDS)
  for (const { text, limit } of searches[kind]) {
    const [a, b] = builds.map((build) => build.search.search(build.parse(text), limit + 1, undefined).hits);
    if (JSON.stringify(a?.map((h) => [h.docno, h.score])) !== JSON.stringify(b?.map((h) => [h.docno, h.score]))) differing += 1;
  }
console.log(`${differing} of ${SEARCH_KINDS.length * Number(values.queries)} searches differ between the builds`);

/** CPU µs a search for one pass over a kind's searches. */
function pass(build: Build, kind: SearchKind, what: 'rank' | 'page'): number {
  const list = searches[kind].map((s) => ({ query: build.parse(s.text), limit: s.limit }));
  const started = process.cpuUsage();
  for (const { query, limit } of list) {
    if (what === 'rank') build.search.search(query, limit + 1, undefined);
    else build.page(query, limit);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / list.length;
}

const rounds = Number(values.rounds);
const figures = new Map<string, number[]>();
const record = (key: string, value: number): void => {
  figures.set(key, [...(figures.get(key) ?? []), value]);
};
for (const build of builds) for (const kind of SEARCH_KINDS) for (const what of ['rank', 'page'] as const) pass(build, kind, what);
for (let round = 0; round < rounds; round += 1) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const kind of SEARCH_KINDS)
    for (const what of ['rank', 'page'] as const) {
      const times = new Map(order.map((build) => [build, pass(build, kind, what)]));
      record(`${kind} ${what} ref`, times.get(ref) as number);
      record(`${kind} ${what} own`, times.get(own) as number);
      record(`${kind} ${what} ratio`, (times.get(own) as number) / (times.get(ref) as number));
    }
}

console.log(`\n${path.basename(corpus)}: CPU µs a search, median of ${rounds} rounds; ratio: median of each round's this ÷ ref\n`);
console.log('| kind | rank, ref | rank, this | ratio | page, ref | page, this | ratio |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const kind of SEARCH_KINDS) {
  const cell = (what: string, side: string): string => median(figures.get(`${kind} ${what} ${side}`) ?? []).toFixed(0);
  const ratio = (what: string): string => `${median(figures.get(`${kind} ${what} ratio`) ?? []).toFixed(2)}×`;
  console.log(
    `| ${kind} | ${cell('rank', 'ref')} | ${cell('rank', 'own')} | ${ratio('rank')} | ${cell('page', 'ref')} | ${cell('page', 'own')} | ${ratio('page')} |`,
  );
}

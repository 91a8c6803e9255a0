/**
 * `npm run bench`: the service as its users load it, next to the best baseline on the same machine
 * in the same run (see bench/README.md).
 *
 * - Corpora of 1k/10k/100k generated guides (bench/corpus.ts), imported with the real CLI; the
 *   folders and databases are cached in bench/.cache (a database is rebuilt when the built import
 *   or store code changes).
 * - The real server (`node dist/cli.js serve`) pinned to CPU 0, autocannon pinned to CPU 1
 *   (bench/load-worker.ts), loopback only, fixed connections and duration, every scenario run
 *   `--runs` times after a warm-up, medians reported.
 * - The baseline: raw node:http answering the very bytes the service answered (bench/baseline-server.ts),
 *   pinned to the same CPU, loaded the same way.
 * - Output: a Markdown table on stdout and in bench/results/<date>.md, all figures in <date>.json.
 *
 * Options: --smoke (1k corpus, one short run of everything: proves the harness in CI),
 * --corpus 1k,10k,100k, --runs 3, --duration 10, --warmup 2, --connections 50, --only <text>,
 * --ref <git ref> (benchmark a committed version, built in bench/.cache), --no-build, --fresh.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request as httpSend } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CORPUS_VERSION, createRandom, parseSize, writeCorpus } from './corpus.js';
import { machineTicks, median, rssKb, stealShare } from './lib/measure.js';
import { freePort, startGuidesServer } from './lib/processes.js';
import type { GuidesServer } from './lib/processes.js';
import { SEARCH_KINDS, searchPaths } from './searches.js';
import type { SearchKind } from './searches.js';
import { startCommand } from '../scripts/start-command.js';
import { SEARCH_LOW_NICE } from '../src/store/sqlite/search/sqlite-search-pool.js';
import { openSqliteDatabase } from '../src/store/sqlite/sqlite-database.js';
import type { StartCommand } from '../scripts/start-command.js';
import type { BaselineResponse } from './baseline-server.js';
import type { LoadJob, LoadResult } from './load-worker.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = path.join(ROOT, 'bench', '.cache');
const RESULTS = path.join(ROOT, 'bench', 'results');
/** The baseline's paths a scenario: at most load-worker's PREBUILT_PATHS, so that they are sent prebuilt. */
const BASELINE_PATHS = 64;
/** Headers of the service's answers that the baseline does not replay: its own connection sets them. */
const UNREPLAYED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);
const SERVER_CPU = '0';
const LOAD_CPU = '1';
const CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdefghijklmnop';
const PAGE = 20;
/** Connections of the search throughput scenarios. */
const SEARCH_CONNECTIONS = 32;

interface Options {
  smoke: boolean;
  corpora: string[];
  runs: number;
  duration: number;
  warmup: number;
  connections: number;
  only?: string;
  ref?: string;
  build: boolean;
  fresh: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      corpus: { type: 'string' },
      runs: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      ref: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      fresh: { type: 'boolean', default: false },
    },
  });
  const smoke = values.smoke ?? false;
  const number = (value: string | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`not a positive number: ${value}`);
    return parsed;
  };
  return {
    smoke,
    corpora: (values.corpus ?? (smoke ? '1k' : '1k,10k,100k'))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    runs: number(values.runs, smoke ? 1 : 3),
    duration: number(values.duration, smoke ? 0.4 : 10),
    warmup: number(values.warmup, smoke ? 0.25 : 2),
    connections: number(values.connections, 50),
    ...(values.only ? { only: values.only } : {}),
    ...(values.ref ? { ref: values.ref } : {}),
    build: !(values['no-build'] ?? false),
    fresh: values.fresh ?? false,
  };
}

const log = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};

// ---------------------------------------------------------------------------------------------
// The code under test: the working tree's build, or a committed ref exported and built apart.

interface Build {
  dir: string;
  cli: string;
  /** The environment and node options of the build's `npm start` (`[NAME=value] node <options> dist/cli.js serve`): the server runs as operators run it. */
  start: StartCommand;
  label: string;
}

function prepareBuild(options: Options): Build {
  if (options.ref) {
    const sha = execFileSync('git', ['rev-parse', options.ref], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dir = path.join(CACHE, `ref-${sha.slice(0, 12)}`);
    if (!existsSync(path.join(dir, 'dist', 'cli.js'))) {
      log(`building ${options.ref} (${sha.slice(0, 12)}) in ${path.relative(ROOT, dir)}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C "${dir}"`], { cwd: ROOT });
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
      // The ref's own build script: what it builds has changed over time (tsc, then esbuild too).
      execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
    }
    return { dir, cli: path.join(dir, 'dist', 'cli.js'), start: startCommand(dir), label: `${options.ref} (${sha.slice(0, 12)})` };
  }
  if (options.build) {
    // npm run build, as npm start and CI build: tsc alone would leave typebox unbundled (a slower start).
    log('building (npm run build)');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  }
  let head = 'unknown';
  try {
    head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    if (dirty) head += ' + uncommitted changes in src/';
  } catch {
    // not a git checkout
  }
  return { dir: ROOT, cli: path.join(ROOT, 'dist', 'cli.js'), start: startCommand(ROOT), label: `working tree at ${head}` };
}

/** Hash of the built code that shapes a database (import, store, domain), to key cached databases. */
function importCodeHash(build: Build): string {
  const hash = createHash('sha256').update(`corpus ${CORPUS_VERSION}\n`);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.js')) hash.update(entry.name).update(readFileSync(file));
    }
  };
  for (const sub of ['store', 'content', 'guides']) {
    const dir = path.join(build.dir, 'dist', sub);
    if (existsSync(dir)) walk(dir);
  }
  return hash.digest('hex').slice(0, 16);
}

// ---------------------------------------------------------------------------------------------
// Corpora and databases.

interface CorpusInfo {
  label: string;
  size: number;
  dir: string;
  db: string;
  importSeconds: number;
  importMeasuredAt: string;
  importCached: boolean;
  dbBytes: number;
  published: number;
}

function ensureCorpus(size: number, options: Options): string {
  const dir = path.join(CACHE, `corpus-${size}-v${CORPUS_VERSION}`);
  const marker = path.join(dir, '.complete');
  if (options.fresh || !existsSync(marker)) {
    log(`generating the ${size}-guide corpus in ${path.relative(ROOT, dir)}`);
    const started = performance.now();
    writeCorpus(dir, { size });
    writeFileSync(marker, new Date().toISOString());
    log(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  return dir;
}

/** Markers `<db>.inuse-<pid>`: runs sharing this checkout never delete a database another is serving. */
const markers: string[] = [];
function markInUse(db: string): void {
  const marker = `${db}.inuse-${process.pid}`;
  writeFileSync(marker, '');
  markers.push(marker);
}
process.on('exit', () => {
  for (const marker of markers) rmSync(marker, { force: true });
});

function isInUse(db: string): boolean {
  const prefix = `${path.basename(db)}.inuse-`;
  return readdirSync(path.dirname(db)).some((name) => {
    if (!name.startsWith(prefix)) return false;
    const pid = Number(name.slice(prefix.length));
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EPERM') return true;
      rmSync(path.join(path.dirname(db), name), { force: true });
      return false;
    }
  });
}

function fileBytes(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

function ensureDatabase(label: string, size: number, corpusDir: string, build: Build, options: Options): CorpusInfo {
  const key = importCodeHash(build);
  const db = path.join(CACHE, `db-${size}-${key}.db`);
  const sidecar = `${db}.json`;
  if (options.fresh || !existsSync(sidecar)) {
    // Databases of this size built by other code are stale (and large), so they go, unless
    // another benchmark run (same checkout) is serving one right now.
    for (const name of readdirSync(CACHE)) {
      const base = /^(db-\d+-[0-9a-f]+\.db)/.exec(name)?.[1];
      if (name.startsWith(`db-${size}-`) && base !== undefined && !isInUse(path.join(CACHE, base)))
        rmSync(path.join(CACHE, name), { force: true });
    }
    log(`importing ${label} with the real CLI (guides import)`);
    const started = performance.now();
    execFileSync(process.execPath, [build.cli, 'import', corpusDir], {
      env: { ...process.env, DATABASE_URL: `sqlite:${db}`, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
      maxBuffer: 1 << 30,
    });
    const importSeconds = (performance.now() - started) / 1000;
    log(`imported in ${importSeconds.toFixed(1)} s`);
    const handle = openSqliteDatabase(db);
    handle.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    handle.close();
    writeFileSync(sidecar, JSON.stringify({ importSeconds, measuredAt: new Date().toISOString() }));
  }
  markInUse(db);
  const meta = JSON.parse(readFileSync(sidecar, 'utf8')) as { importSeconds: number; measuredAt: string };
  const handle = openSqliteDatabase(db, { readonly: true });
  const published = (handle.prepare("SELECT count(*) AS n FROM guides WHERE status = 'published'").get() as { n: number }).n;
  handle.close();
  return {
    label,
    size,
    dir: corpusDir,
    db,
    importSeconds: meta.importSeconds,
    importMeasuredAt: meta.measuredAt,
    importCached: !options.fresh && Date.now() - Date.parse(meta.measuredAt) > 60_000,
    dbBytes: fileBytes(db) + fileBytes(`${db}-wal`),
    published,
  };
}

// ---------------------------------------------------------------------------------------------
// Child processes: the load generator, the baseline server, the service.

interface Worker {
  child: ChildProcess;
  request<T>(message: object): Promise<T>;
}

function startIpcChild(
  cpu: string,
  script: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Worker & { hello: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', cpu, process.execPath, '--import', 'tsx', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let nextId = 1;
    const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
    child.on('message', (message: { id?: number; ready?: boolean; result?: unknown; error?: string }) => {
      if (message.ready) {
        resolve({
          child,
          hello: message as Record<string, unknown>,
          request<T>(body: object): Promise<T> {
            return new Promise<T>((res, rej) => {
              const id = nextId++;
              pending.set(id, { resolve: res as (value: unknown) => void, reject: rej });
              child.send({ id, ...body });
            });
          },
        });
        return;
      }
      if (message.id !== undefined) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(message.error));
        else waiter?.resolve(message.result);
      }
    });
    child.once('exit', (code) => {
      for (const waiter of pending.values()) waiter.reject(new Error(`${path.basename(script)} exited with ${code}`));
      reject(new Error(`${path.basename(script)} exited with ${code} before it was ready`));
    });
  });
}

function httpRequest(
  url: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpSend(url, { method: body === undefined ? 'GET' : 'POST', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers))
          if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        resolve({ status: response.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks) });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.setTimeout(10_000, () => request.destroy(new Error('timeout')));
    request.end(body);
  });
}

async function startService(build: Build, db: string, logLevel: string): Promise<GuidesServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return startGuidesServer({
    cli: build.cli,
    cwd: build.dir,
    nodeOptions: build.start.nodeOptions,
    port,
    cpu: SERVER_CPU,
    env: {
      ...process.env,
      ...build.start.env,
      NODE_ENV: 'production',
      DATABASE_URL: `sqlite:${db}`,
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: url,
      LOG_LEVEL: logLevel,
      CURSOR_SECRET,
      RATE_LIMIT_PER_MINUTE: '0',
      SHUTDOWN_GRACE_MS: '3000',
      // The search budget is off: the load comes from one client address, whose per-client cap
      // would answer most searches with 429, and the global queue would shed the rest with 503:
      // that would measure the budget, not the engine. It changes nothing for other requests.
      SEARCH_CONCURRENCY: '0',
    },
    readyTimeoutMs: 120_000,
    pollMs: 5,
  });
}

/**
 * The server's CPU time during a run, in ms a request, by thread: the event loop (the process's
 * main thread), the search workers (the threads under SCHED_IDLE, or at nice +10 where that could
 * not be set: what SEARCH_PRIORITY's default gives them, see sqlite-search-pool.ts), and the rest
 * (V8's helper threads, libuv's pool). On one core these shares say what limits a scenario.
 */
interface ThreadCpu {
  eventLoopMs: number;
  searchWorkersMs: number;
  otherMs: number;
}

type TaskTimes = Map<number, { ticks: number; role: keyof ThreadCpu }>;

/** Linux's SCHED_IDLE policy number (sched.h). */
const SCHED_IDLE = 5;

let clockTicks: number | undefined;
/** The unit of /proc's CPU times (USER_HZ, 100 on common Linux builds). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * Each thread's user and system time so far (/proc/<pid>/task/<tid>/stat), with its role;
 * undefined where /proc has no such process (not Linux). The kernel charges a tick to the thread
 * that holds the CPU when it ticks: over a run of seconds, a fair share.
 */
function taskTimes(pid: number): TaskTimes | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const times: TaskTimes = new Map();
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // The thread ended meanwhile.
    }
    // The fields after the command name (which may hold spaces and parentheses); the first is field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const field = (n: number): number => Number(fields[n - 3]);
    const role =
      Number(tid) === pid ? 'eventLoopMs' : field(41) === SCHED_IDLE || field(19) === SEARCH_LOW_NICE ? 'searchWorkersMs' : 'otherMs';
    times.set(Number(tid), { ticks: field(14) + field(15), role });
  }
  return times;
}

function medianCpu(runs: readonly ThreadCpu[]): ThreadCpu {
  return {
    eventLoopMs: median(runs.map((r) => r.eventLoopMs)),
    searchWorkersMs: median(runs.map((r) => r.searchWorkersMs)),
    otherMs: median(runs.map((r) => r.otherMs)),
  };
}

function threadCpu(before: TaskTimes, after: TaskTimes, requests: number): ThreadCpu | undefined {
  if (requests === 0) return undefined;
  const cpu: ThreadCpu = { eventLoopMs: 0, searchWorkersMs: 0, otherMs: 0 };
  const msPerTick = 1000 / ticksPerSecond();
  for (const [tid, { ticks, role }] of after) cpu[role] += ((ticks - (before.get(tid)?.ticks ?? 0)) * msPerTick) / requests;
  return cpu;
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

interface Scenario {
  id: string;
  title: string;
  logLevel: 'warn' | 'info';
  connections: number;
  expectStatus: number;
  headers?: Record<string, string>;
  /** Paths for one run (-1: the warm-up); uncached scenarios give every run its own paths. */
  paths(run: number): string[];
  /** POST bodies for one run, sent to paths(run)[0] (the MCP scenario). */
  bodies?(run: number): string[];
  isUncached: boolean;
  /**
   * Paths of a reference load on the same server whose runs alternate with this one's (this, the
   * reference, this, …), for a ratio of neighbouring runs: the deep pages against the early pages.
   */
  referencePaths?(run: number): string[];
  /** What the reference runs are, for the tables. */
  referenceTitle?: string;
}

async function loadCursorCodec(build: Build): Promise<{ encode(payload: unknown): string }> {
  const module = (await import(pathToFileURL(path.join(build.dir, 'dist', 'guides', 'cursor.js')).href)) as {
    createCursorCodec(keys: Buffer[]): { encode(payload: unknown): string };
  };
  return module.createCursorCodec([Buffer.from(CURSOR_SECRET, 'utf8')]);
}

const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'search_guides',
};

/** A 2026-07-28 tools/call of search_guides, as a client sends it. */
function mcpSearchBody(query: string, id: number): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'search_guides',
      arguments: { query, limit: PAGE },
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
}

async function makeScenarios(corpus: CorpusInfo, build: Build, options: Options): Promise<{ scenarios: Scenario[]; deepPage: number }> {
  const handle = openSqliteDatabase(corpus.db, { readonly: true });
  const rows = handle
    .prepare(
      `SELECT slug, published_ms AS ms FROM guides INDEXED BY guides_published_by_date
    WHERE status = 'published' ORDER BY published_ms DESC, slug`,
    )
    .all() as { slug: string; ms: number }[];
  handle.close();
  const codec = await loadCursorCodec(build);
  const cursorAt = (index: number): string => {
    const row = rows[Math.min(index, rows.length - 1)] as { slug: string; ms: number };
    return codec.encode({ kind: 'list', after: { publishedMs: row.ms, slug: row.slug } });
  };
  const runs = options.runs + 1;
  const perRunC1 = options.smoke ? 2_000 : 20_000;
  const perRunBusy = options.smoke ? 5_000 : 50_000;
  const slice = <T>(pool: readonly T[], per: number, offset: number, run: number): T[] => {
    const start = offset + (run + 1) * per;
    const part = pool.slice(start, start + per);
    return part.length > 0 ? part : pool.slice(0, per);
  };
  const hot = rows.slice(0, 16).map((r) => `/api/v1/guides/${r.slug}`);
  const random = createRandom(99);
  const randomSlugs = Array.from(
    { length: 200_000 },
    () => `/api/v1/guides/${(rows[Math.floor(random() * rows.length)] as { slug: string }).slug}`,
  );
  // Page 1,000 of the list starts after the 19,980th guide (smaller corpora: their second half).
  // Both cursor scenarios walk the same number of positions with the same limits (20–50), so each
  // request is a distinct, uncached page and the only difference is the depth.
  const deepIndex = Math.max(0, Math.min(999 * PAGE - 1, Math.floor(rows.length / 2)));
  const deepPage = Math.floor(deepIndex / PAGE) + 2;
  const span = Math.max(1, Math.min(deepIndex, rows.length - deepIndex - 60));
  const cursorPaths = (from: number, run: number): string[] =>
    Array.from({ length: perRunC1 }, (_, k) => {
      const i = (run + 1) * perRunC1 + k;
      const limit = PAGE + (Math.floor(i / span) % 31);
      return `/api/v1/guides?cursor=${cursorAt(from + (i % span))}${limit === PAGE ? '' : `&limit=${limit}`}`;
    });
  const scenarios: Scenario[] = [
    {
      id: 'detail-hot',
      title: 'guide detail, 16 hot slugs, logs at warn',
      logLevel: 'warn',
      connections: options.connections,
      expectStatus: 200,
      paths: () => hot,
      isUncached: false,
    },
    // The same guides as agents ask for them (issue 50: at least 0.7 × detail-hot's throughput).
    {
      id: 'detail-hot-markdown',
      title: 'guide detail as Markdown (Accept: text/markdown), 16 hot slugs, logs at warn',
      logLevel: 'warn',
      connections: options.connections,
      expectStatus: 200,
      headers: { accept: 'text/markdown' },
      paths: () => hot,
      isUncached: false,
    },
    {
      id: 'detail-hot-logged',
      title: 'guide detail, 16 hot slugs, a log line per request (info)',
      logLevel: 'info',
      connections: options.connections,
      expectStatus: 200,
      paths: () => hot,
      isUncached: false,
    },
    {
      id: 'detail-random',
      title: 'guide detail, random slugs over all guides',
      logLevel: 'warn',
      connections: options.connections,
      expectStatus: 200,
      paths: (run) => slice(randomSlugs, 50_000, 0, run),
      isUncached: false,
    },
    // As browsers and most HTTP clients ask: each miss is compressed (brotli) while its client waits.
    {
      id: 'detail-random-compressed',
      title: 'guide detail, random slugs, Accept-Encoding: gzip, deflate, br',
      logLevel: 'warn',
      connections: options.connections,
      expectStatus: 200,
      headers: { 'accept-encoding': 'gzip, deflate, br' },
      paths: (run) => slice(randomSlugs, 50_000, 0, run),
      isUncached: false,
    },
    {
      id: 'revalidate-304',
      title: '304 revalidation (If-None-Match) of a guide',
      logLevel: 'warn',
      connections: options.connections,
      expectStatus: 304,
      paths: () => [hot[0] as string],
      isUncached: false,
    },
    {
      id: 'list-page-1',
      title: 'list page 1',
      logLevel: 'warn',
      connections: options.connections,
      expectStatus: 200,
      paths: () => ['/api/v1/guides'],
      isUncached: false,
    },
    {
      id: 'product',
      title: 'product',
      logLevel: 'warn',
      connections: options.connections,
      expectStatus: 200,
      paths: () => ['/api/v1/product'],
      isUncached: false,
    },
    {
      id: 'resources',
      title: 'resources',
      logLevel: 'warn',
      connections: options.connections,
      expectStatus: 200,
      paths: () => ['/api/v1/resources'],
      isUncached: false,
    },
    {
      id: 'list-early-pages',
      title: `list pages 2–${deepPage - 1} by cursor, uncached, 1 connection`,
      logLevel: 'warn',
      connections: 1,
      expectStatus: 200,
      paths: (run) => cursorPaths(0, run),
      isUncached: true,
    },
    // Its runs alternate with runs of early pages, for the deep-page target: p99s below a millisecond
    // drift by a tenth of one from one minute to the next on these VMs. The reference's run numbers
    // start past list-early-pages' own, so its cursors are new again (never cached).
    {
      id: 'list-deep-pages',
      title: `list pages ${deepPage}+ by cursor, uncached, 1 connection`,
      logLevel: 'warn',
      connections: 1,
      expectStatus: 200,
      paths: (run) => cursorPaths(deepIndex, run),
      referencePaths: (run) => cursorPaths(0, run + runs + 1),
      referenceTitle: 'list pages by cursor from page 2 (the reference runs)',
      isUncached: true,
    },
  ];
  // The realistic searches (bench/searches.ts): limits 1–50, at one connection (latency) and at
  // SEARCH_CONNECTIONS (throughput), each request a distinct path so no cache answers.
  const titles: Record<SearchKind, string> = { typical: 'typical 2–3 words', common: 'common terms', prefix: 'short prefixes' };
  for (const kind of SEARCH_KINDS) {
    const pool = searchPaths(kind, runs * (perRunC1 + perRunBusy));
    scenarios.push({
      id: `search-${kind}-c1`,
      title: `search, ${titles[kind]}, uncached, 1 connection`,
      logLevel: 'warn',
      connections: 1,
      expectStatus: 200,
      paths: (run) => slice(pool, perRunC1, 0, run),
      isUncached: true,
    });
    scenarios.push({
      id: `search-${kind}-c${SEARCH_CONNECTIONS}`,
      title: `search, ${titles[kind]}, uncached, ${SEARCH_CONNECTIONS} connections`,
      logLevel: 'warn',
      connections: SEARCH_CONNECTIONS,
      expectStatus: 200,
      paths: (run) => slice(pool, perRunBusy, runs * perRunC1, run),
      isUncached: true,
    });
  }
  // The MCP search tool against the REST search of the same texts, in alternating runs on one server
  // (its target: at most 1.5 times the cost). Both pages hold PAGE results; neither is ever cached.
  const commonTexts = [
    ...new Set(searchPaths('common', runs * perRunC1 * 2, 77).map((p) => new URL(p, 'http://bench').searchParams.get('q') ?? '')),
  ];
  const textsOf = (run: number): string[] => slice(commonTexts, perRunC1, 0, run);
  scenarios.push({
    id: 'mcp-search-common-c1',
    title: 'MCP tools/call search_guides, common terms, 1 connection (reference: GET ?q= of the same texts)',
    logLevel: 'warn',
    connections: 1,
    expectStatus: 200,
    headers: MCP_HEADERS,
    paths: () => ['/mcp'],
    bodies: (run) => textsOf(run).map((query, id) => mcpSearchBody(query, id)),
    referencePaths: (run) => textsOf(run).map((q) => `/api/v1/guides?q=${encodeURIComponent(q)}&limit=${PAGE}`),
    referenceTitle: 'REST search GET ?q= of the same texts, 1 connection (the reference runs)',
    isUncached: true,
  });
  return { scenarios: scenarios.filter((s) => !options.only || s.id.includes(options.only)), deepPage };
}

// ---------------------------------------------------------------------------------------------
// Running.

interface RunFigures {
  app: LoadResult;
  /** The baseline's run right after this one. */
  baseline: LoadResult;
  /** The run of the reference scenario right after this one (see Scenario.referencePaths). */
  reference?: LoadResult;
  rssMaxKb: number;
  /** The machine's 1-minute load average when the run ended: other work shows up here. */
  loadAverage: number;
  /** The share of the machine's CPU the hypervisor took during the run (other VMs on its host). */
  steal: number;
  /** The server's CPU time a request during this run (Linux). */
  cpu?: ThreadCpu;
  /** The same during the reference run. */
  referenceCpu?: ThreadCpu;
}

interface ScenarioResult {
  id: string;
  title: string;
  connections: number;
  runs: RunFigures[];
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  baselineRequestsPerSecond: number;
  baselineP99Ms: number;
  ratio: number;
  /** With reference runs: the median of each run's p99 over the reference run's right after it. */
  referenceP99Ms?: number;
  p99Ratio?: number;
  referenceRequestsPerSecond?: number;
  /** With reference runs: the median of the reference's req/s over this scenario's (the time a request, relative). */
  costRatio?: number;
  responseBytes: number;
  /** Medians of the runs' CPU time a request, by thread (Linux). */
  cpu?: ThreadCpu;
  /** The same for the reference runs. */
  referenceCpu?: ThreadCpu;
  referenceTitle?: string;
  isUncached: boolean;
  distinctPathRatio: number;
  unexpected: number;
}

interface CorpusResult {
  corpus: Omit<CorpusInfo, 'dir' | 'db'>;
  readyMs: number[];
  rssMaxKb: number;
  deepPage: number;
  scenarios: ScenarioResult[];
}

/**
 * Reads the database file through, so that it is in the OS's page cache as on a server whose
 * memory holds its database, however long ago a scenario last read a part of it. Some machines
 * reclaim page cache that has been idle for a while, even with plenty of memory free: at the
 * largest corpus the scenarios that followed a smaller one then measured the disk, not the
 * server. Reading a cached file is quick and a cold one slow. Done before each scenario, never
 * during one. Returns the seconds it took.
 */
function warmPageCache(file: string): number {
  const started = performance.now();
  const buffer = Buffer.allocUnsafe(8 * 1024 * 1024);
  for (const part of [file, `${file}-wal`]) {
    if (!existsSync(part)) continue;
    const fd = openSync(part, 'r');
    try {
      while (readSync(fd, buffer, 0, buffer.length, null) > 0) {
        // Reading is the point.
      }
    } finally {
      closeSync(fd);
    }
  }
  return (performance.now() - started) / 1000;
}

async function benchCorpus(
  label: string,
  build: Build,
  options: Options,
  load: Worker,
  baseline: Worker & { hello: Record<string, unknown> },
): Promise<CorpusResult> {
  const size = parseSize(label);
  const corpusDir = ensureCorpus(size, options);
  const corpus = ensureDatabase(label, size, corpusDir, build, options);
  log(`${label}: ${corpus.published} published guides, database ${(corpus.dbBytes / 1e6).toFixed(0)} MB`);

  const warmSeconds = warmPageCache(corpus.db);
  if (warmSeconds > 2) log(`${label}: read the database into the page cache in ${warmSeconds.toFixed(1)} s`);
  const readyMs: number[] = [];
  for (let i = 0; i < (options.smoke ? 1 : 3); i += 1) {
    const service = await startService(build, corpus.db, 'warn');
    readyMs.push(service.readyMs);
    await service.stop();
  }
  log(`${label}: start to ready ${readyMs.map((ms) => ms.toFixed(0)).join(', ')} ms`);

  const { scenarios, deepPage } = await makeScenarios(corpus, build, options);
  const results: ScenarioResult[] = [];
  let rssMaxKb = 0;
  const baselineUrl = `http://127.0.0.1:${String(baseline.hello.port)}`;
  // One server per log level, scenarios in their listed order: the `warn` server takes every kind
  // of load in turn (guide reads, lists, cursors, searches), as a production server does over
  // time, so its peak RSS is that of a server holding all of it at once.
  const logLevels = [...new Set(scenarios.map((s) => s.logLevel))];
  for (const logLevel of logLevels) {
    const group = scenarios.filter((s) => s.logLevel === logLevel);
    const service = await startService(build, corpus.db, logLevel);
    try {
      for (const scenario of group) {
        const headers = { ...scenario.headers };
        if (scenario.expectStatus === 304) {
          headers['if-none-match'] = (await httpRequest(`${service.url}${scenario.paths(0)[0] as string}`, headers)).headers.etag ?? '';
        }
        const job = (run: number, seconds: number): LoadJob => ({
          url: service.url,
          paths: scenario.paths(run),
          headers,
          connections: scenario.connections,
          durationSeconds: seconds,
          expectStatus: scenario.expectStatus,
          ...(scenario.bodies ? { bodies: scenario.bodies(run) } : {}),
        });
        const warmed = warmPageCache(corpus.db);
        log(
          `${label}: ${scenario.id} (${scenario.connections} connection(s), ${options.runs} × ${options.duration} s)${warmed > 2 ? `; ${warmed.toFixed(1)} s to read the database into the page cache first` : ''}`,
        );
        // The baseline answers the very bytes the service answered, path by path, for the first
        // warm-up paths (an uncached scenario's bodies range from a few bytes, nothing found, to tens
        // of KB: one of them alone would set the ceiling by chance). They are few enough to be sent
        // as prebuilt requests (load-worker's PREBUILT_PATHS): a request rebuilt for each of thousands
        // of paths would make the load generator, not Node, the ceiling. Runs alternate with the
        // service's (service, baseline, service, …): on a shared machine the capacity of the CPU
        // drifts within a minute, and each ratio compares two neighbouring runs.
        const basePaths = scenario.paths(-1).slice(0, BASELINE_PATHS);
        const responses: { path: string; response: BaselineResponse }[] = [];
        const bodyBytes: number[] = [];
        for (const basePath of basePaths) {
          const answered = await httpRequest(`${service.url}${basePath}`, headers, scenario.bodies?.(-1)[0]);
          const kept = Object.entries(answered.headers).filter(([name]) => !UNREPLAYED_HEADERS.has(name));
          bodyBytes.push(answered.body.length);
          responses.push({
            path: basePath,
            response: { status: answered.status, headers: Object.fromEntries(kept), body: answered.body.toString('base64') },
          });
        }
        await baseline.request<boolean>({ responses });
        const baseJob = (run: number, seconds: number): LoadJob => ({ ...job(run, seconds), paths: basePaths, url: baselineUrl });
        const { referencePaths } = scenario;
        // A reference is plain GETs of its paths (the MCP scenario's: the REST search).
        const referenceJob =
          referencePaths &&
          ((run: number, seconds: number): LoadJob => {
            const own = job(run, seconds);
            delete own.bodies;
            return { ...own, headers: scenario.bodies ? {} : headers, paths: referencePaths(run) };
          });
        await load.request<LoadResult>({ job: job(-1, options.warmup) });
        if (referenceJob) await load.request<LoadResult>({ job: referenceJob(-1, options.warmup) });
        await load.request<LoadResult>({ job: baseJob(-1, options.warmup) });
        const runs: RunFigures[] = [];
        for (let run = 0; run < options.runs; run += 1) {
          let peak = 0;
          const sampler = setInterval(() => {
            peak = Math.max(peak, rssKb(service.child.pid ?? 0) ?? 0);
          }, 200);
          const pid = service.child.pid ?? 0;
          const timesBefore = taskTimes(pid);
          const ticksBefore = machineTicks();
          const app = await load.request<LoadResult>({ job: job(run, options.duration) });
          const timesAfter = taskTimes(pid);
          const steal = stealShare(ticksBefore, machineTicks());
          clearInterval(sampler);
          peak = Math.max(peak, rssKb(pid) ?? 0);
          rssMaxKb = Math.max(rssMaxKb, peak);
          const cpu = timesBefore && timesAfter ? threadCpu(timesBefore, timesAfter, app.requests) : undefined;
          const loadAverage = os.loadavg()[0] ?? 0;
          const figures: RunFigures = {
            app,
            baseline: await load.request<LoadResult>({ job: baseJob(run, options.duration) }),
            rssMaxKb: peak,
            loadAverage,
            steal,
            ...(cpu ? { cpu } : {}),
          };
          if (referenceJob) {
            const before = taskTimes(pid);
            figures.reference = await load.request<LoadResult>({ job: referenceJob(run, options.duration) });
            const after = taskTimes(pid);
            const referenceCpu = before && after ? threadCpu(before, after, figures.reference.requests) : undefined;
            if (referenceCpu) figures.referenceCpu = referenceCpu;
          }
          runs.push(figures);
        }
        const rps = median(runs.map((r) => r.app.requestsPerSecond));
        const result: ScenarioResult = {
          id: scenario.id,
          title: scenario.title,
          connections: scenario.connections,
          runs,
          requestsPerSecond: rps,
          p50Ms: median(runs.map((r) => r.app.p50Ms)),
          p99Ms: median(runs.map((r) => r.app.p99Ms)),
          baselineRequestsPerSecond: median(runs.map((r) => r.baseline.requestsPerSecond)),
          baselineP99Ms: median(runs.map((r) => r.baseline.p99Ms)),
          // The median of the runs' ratios, each to the baseline run right after it.
          ratio: median(runs.map((r) => r.app.requestsPerSecond / r.baseline.requestsPerSecond)),
          ...(referenceJob
            ? {
                referenceP99Ms: median(runs.map((r) => r.reference?.p99Ms ?? Number.NaN)),
                p99Ratio: median(runs.map((r) => r.app.p99Ms / (r.reference?.p99Ms ?? Number.NaN))),
                referenceRequestsPerSecond: median(runs.map((r) => r.reference?.requestsPerSecond ?? Number.NaN)),
                costRatio: median(runs.map((r) => (r.reference?.requestsPerSecond ?? Number.NaN) / r.app.requestsPerSecond)),
              }
            : {}),
          responseBytes: median(bodyBytes),
          ...(runs.every((r) => r.cpu) ? { cpu: medianCpu(runs.map((r) => r.cpu!)) } : {}),
          ...(referenceJob && runs.every((r) => r.referenceCpu) ? { referenceCpu: medianCpu(runs.map((r) => r.referenceCpu!)) } : {}),
          ...(scenario.referenceTitle ? { referenceTitle: scenario.referenceTitle } : {}),
          isUncached: scenario.isUncached,
          distinctPathRatio: Math.min(...runs.map((r) => r.app.distinctPathRatio)),
          unexpected: runs.reduce((sum, r) => sum + r.app.unexpected + r.app.errors, 0),
        };
        if (result.unexpected > 0)
          log(`  ${result.unexpected} unexpected responses or errors: ${JSON.stringify(runs.map((r) => r.app.statusCounts))}`);
        log(
          `  ${rps.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, ${result.ratio.toFixed(2)} × baseline (${result.baselineRequestsPerSecond.toFixed(0)} req/s, p99 ${result.baselineP99Ms.toFixed(2)} ms)${result.p99Ratio !== undefined ? `, p99 ${result.p99Ratio.toFixed(2)} × the alternating reference runs' (${result.referenceP99Ms?.toFixed(2)} ms), ${result.costRatio?.toFixed(2)} × their time a request (${result.referenceRequestsPerSecond?.toFixed(0)} req/s)` : ''}`,
        );
        results.push(result);
      }
    } finally {
      await service.stop();
    }
  }
  return {
    corpus: {
      label: corpus.label,
      size: corpus.size,
      importSeconds: corpus.importSeconds,
      importMeasuredAt: corpus.importMeasuredAt,
      importCached: corpus.importCached,
      dbBytes: corpus.dbBytes,
      published: corpus.published,
    },
    readyMs,
    rssMaxKb,
    deepPage,
    scenarios: results,
  };
}

// ---------------------------------------------------------------------------------------------
// Targets and the report.

interface TargetRow {
  target: string;
  corpus: string;
  goal: string;
  measured: string;
  status: 'PASS' | 'MISS' | 'NOT RUN';
}

function evaluateTargets(results: readonly CorpusResult[]): TargetRow[] {
  const rows: TargetRow[] = [];
  const find = (corpus: string, id: string): ScenarioResult | undefined =>
    results.find((r) => r.corpus.label === corpus)?.scenarios.find((s) => s.id === id);
  const status = (ok: boolean | undefined): TargetRow['status'] => (ok === undefined ? 'NOT RUN' : ok ? 'PASS' : 'MISS');
  const ratioTarget = (target: string, id: string, goal: number): void => {
    for (const result of results) {
      const s = find(result.corpus.label, id);
      rows.push({
        target,
        corpus: result.corpus.label,
        goal: `≥ ${goal} × baseline`,
        measured: s ? `${s.ratio.toFixed(2)} × (${s.requestsPerSecond.toFixed(0)} / ${s.baselineRequestsPerSecond.toFixed(0)} req/s)` : '—',
        status: status(s ? s.ratio >= goal : undefined),
      });
    }
    if (results.length === 0) rows.push({ target, corpus: '—', goal: `≥ ${goal} × baseline`, measured: '—', status: 'NOT RUN' });
  };
  ratioTarget('guide detail, hot, logs at warn', 'detail-hot', 0.75);
  ratioTarget('guide detail, hot, a log line per request', 'detail-hot-logged', 0.45);
  // Markdown against the JSON detail on the same server, same run (not against the baseline).
  for (const result of results) {
    const json = find(result.corpus.label, 'detail-hot');
    const markdown = find(result.corpus.label, 'detail-hot-markdown');
    const ratio = json && markdown ? markdown.requestsPerSecond / json.requestsPerSecond : undefined;
    rows.push({
      target: 'guide detail as Markdown vs JSON detail, hot',
      corpus: result.corpus.label,
      goal: '≥ 0.7 × JSON detail req/s',
      measured:
        ratio === undefined
          ? '—'
          : `${ratio.toFixed(2)} × (${markdown!.requestsPerSecond.toFixed(0)} / ${json!.requestsPerSecond.toFixed(0)} req/s)`,
      status: status(ratio === undefined ? undefined : ratio >= 0.7),
    });
  }
  // The MCP search tool against the REST search of the same texts, in runs that alternate on one server.
  for (const result of results) {
    const mcp = find(result.corpus.label, 'mcp-search-common-c1');
    const cost = mcp?.costRatio;
    const cpuTotal = (cpu: ThreadCpu | undefined): number | undefined =>
      cpu ? cpu.eventLoopMs + cpu.searchWorkersMs + cpu.otherMs : undefined;
    const mcpCpu = cpuTotal(mcp?.cpu);
    const restCpu = cpuTotal(mcp?.referenceCpu);
    rows.push({
      target: 'MCP tools/call search_guides vs REST search of the same texts, time a request (1 connection)',
      corpus: result.corpus.label,
      goal: '≤ 1.5 × REST search',
      measured:
        mcp && cost !== undefined
          ? `${cost.toFixed(2)} × (${mcp.requestsPerSecond.toFixed(0)} / ${mcp.referenceRequestsPerSecond?.toFixed(0)} req/s${mcpCpu !== undefined && restCpu !== undefined ? `; server CPU ${mcpCpu.toFixed(2)} / ${restCpu.toFixed(2)} ms a request` : ''})`
          : '—',
      status: status(cost === undefined ? undefined : cost <= 1.5),
    });
  }
  ratioTarget('list page 1', 'list-page-1', 0.7);
  ratioTarget('product', 'product', 0.7);
  ratioTarget('resources', 'resources', 0.7);
  ratioTarget('304 revalidation', 'revalidate-304', 0.8);
  const main = results.find((r) => r.corpus.label === '100k');
  // Deep pages against early pages in runs that alternate with them (see list-deep-pages).
  const deep = main && find('100k', 'list-deep-pages');
  const deepRatio = deep?.p99Ratio;
  rows.push({
    target: `deep page (page ~${main?.deepPage ?? 1000}) vs early pages, p99`,
    corpus: '100k',
    goal: '≤ 1.2 × early pages p99',
    measured:
      deep && deepRatio !== undefined
        ? `${deep.p99Ms.toFixed(2)} ms vs ${deep.referenceP99Ms?.toFixed(2)} ms (${deepRatio.toFixed(2)} ×, median of alternating runs)`
        : '—',
    status: status(deepRatio === undefined ? undefined : deepRatio <= 1.2),
  });
  // Searches, against the raw node:http baseline sending the same bytes in the same minutes.
  for (const kind of ['typical', 'common'] as const) {
    const busy = find('10k', `search-${kind}-c${SEARCH_CONNECTIONS}`);
    rows.push({
      target: `search ${kind}, uncached, throughput (${SEARCH_CONNECTIONS} connections)`,
      corpus: '10k',
      goal: '≥ 0.05 × baseline',
      measured: busy
        ? `${busy.ratio.toFixed(3)} × (${busy.requestsPerSecond.toFixed(0)} / ${busy.baselineRequestsPerSecond.toFixed(0)} req/s)`
        : '—',
      status: status(busy ? busy.ratio >= 0.05 : undefined),
    });
  }
  for (const kind of SEARCH_KINDS) {
    const c1 = find('10k', `search-${kind}-c1`);
    rows.push({
      target: `search ${kind}, uncached, 1 connection: p99 against p50`,
      corpus: '10k',
      goal: '≤ 4 × p50',
      measured: c1 ? `${(c1.p99Ms / c1.p50Ms).toFixed(2)} × (p99 ${c1.p99Ms.toFixed(2)} ms, p50 ${c1.p50Ms.toFixed(2)} ms)` : '—',
      status: status(c1 ? c1.p99Ms <= 4 * c1.p50Ms : undefined),
    });
  }
  const common10k = find('10k', `search-common-c${SEARCH_CONNECTIONS}`);
  const common100k = find('100k', `search-common-c${SEARCH_CONNECTIONS}`);
  // Each corpus's throughput as a ratio to its own baseline runs, so that a machine busier during one corpus's runs than the other's does not count.
  const scaling = common10k && common100k ? common100k.ratio / common10k.ratio : undefined;
  rows.push({
    target: `search common terms, throughput (${SEARCH_CONNECTIONS} connections), 100k against 10k`,
    corpus: '100k',
    goal: '≥ 0.4 × 10k',
    measured:
      scaling !== undefined && common10k && common100k
        ? `${scaling.toFixed(2)} × (${common100k.ratio.toFixed(3)} × baseline, ${common100k.requestsPerSecond.toFixed(0)} req/s, against ${common10k.ratio.toFixed(3)} ×, ${common10k.requestsPerSecond.toFixed(0)} req/s)`
        : '—',
    status: status(scaling === undefined ? undefined : scaling >= 0.4),
  });
  const tenK = results.find((r) => r.corpus.label === '10k');
  rows.push({
    target: 'import 10k guides',
    corpus: '10k',
    goal: '≤ 8 s',
    measured: tenK ? `${tenK.corpus.importSeconds.toFixed(1)} s` : '—',
    status: status(tenK ? tenK.corpus.importSeconds <= 8 : undefined),
  });
  rows.push({
    target: 'import 100k guides',
    corpus: '100k',
    goal: '≤ 60 s',
    measured: main ? `${main.corpus.importSeconds.toFixed(1)} s` : '—',
    status: status(main ? main.corpus.importSeconds <= 60 : undefined),
  });
  rows.push({
    target: 'server RSS under load',
    corpus: '100k',
    goal: '≤ 200 MB',
    measured: main ? `${(main.rssMaxKb / 1024).toFixed(0)} MB` : '—',
    status: status(main ? main.rssMaxKb / 1024 <= 200 : undefined),
  });
  rows.push({
    target: 'start to ready (first 200 from /readyz)',
    corpus: '100k',
    goal: '≤ 1 s',
    measured: main ? `${median(main.readyMs).toFixed(0)} ms` : '—',
    status: status(main ? median(main.readyMs) <= 1000 : undefined),
  });
  return rows;
}

function machineNotes(build: Build, options: Options, loadBefore: number[], loadAfter: number[]): string[] {
  const cpus = os.cpus();
  return [
    `Date: ${new Date().toISOString()}; code: ${build.label}; Node ${process.version}; ${os.type()} ${os.release()}`,
    `CPU: ${cpus.length} × ${cpus[0]?.model ?? 'unknown'}; memory ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `Server started as \`npm start\` starts it: \`${[...Object.entries(build.start.env).map(([name, value]) => `${name}=${value}`), 'node', ...build.start.nodeOptions, 'dist/cli.js'].join(' ')} serve\`, NODE_ENV=production.`,
    `Server (and baseline) pinned to CPU ${SERVER_CPU}, autocannon pinned to CPU ${LOAD_CPU}; loopback; ${options.runs} run(s) of ${options.duration} s after ${options.warmup} s warm-up per scenario; medians.`,
    `Load average (1/5/15 min) before: ${loadBefore.map((v) => v.toFixed(2)).join(' / ')}, after: ${loadAfter.map((v) => v.toFixed(2)).join(' / ')}. The "load avg" column is the 1-minute load average at the end of each run (median): the benchmark itself accounts for about 2 on this ${os.cpus().length}-CPU machine, anything above that is other work competing with the server or the load generator.`,
    'Request logs of the service go to /dev/null (formatted and written, never read). Uncached scenarios send a distinct request path each time (search text or cursor), so the representation cache never answers them.',
  ];
}

function renderMarkdown(
  results: readonly CorpusResult[],
  targets: readonly TargetRow[],
  notes: readonly string[],
  options: Options,
): string {
  const fmt = (n: number | undefined, digits = 0): string =>
    n === undefined || !Number.isFinite(n)
      ? '—'
      : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const percent = (share: number): string => (Number.isFinite(share) ? `${fmt(share * 100)} %` : '—');
  const lines: string[] = [`# Benchmark results${options.smoke ? ' (smoke run: proves the harness, not the figures)' : ''}`, ''];
  lines.push('## Targets', '', '| target | corpus | goal | measured | status |', '| --- | --- | --- | --- | --- |');
  for (const row of targets) lines.push(`| ${row.target} | ${row.corpus} | ${row.goal} | ${row.measured} | ${row.status} |`);
  lines.push(
    '',
    '## Corpora',
    '',
    '| corpus | published guides | import (real CLI) | database | start to ready (median) | server RSS under load (max) |',
    '| --- | --- | --- | --- | --- | --- |',
  );
  for (const r of results) {
    lines.push(
      `| ${r.corpus.label} | ${fmt(r.corpus.published)} | ${fmt(r.corpus.importSeconds, 1)} s${r.corpus.importCached ? ` (cached, ${r.corpus.importMeasuredAt.slice(0, 16)}Z)` : ''} | ${fmt(r.corpus.dbBytes / 1e6)} MB | ${fmt(median(r.readyMs))} ms | ${fmt(r.rssMaxKb / 1024)} MB |`,
    );
  }
  for (const r of results) {
    lines.push(
      '',
      `## Scenarios, ${r.corpus.label} corpus`,
      '',
      '| scenario | conn. | req/s | p50 ms | p99 ms | baseline req/s | × baseline | baseline p99 ms | body bytes | load avg | steal |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const s of r.scenarios) {
      const flags = `${s.unexpected > 0 ? ` ⚠ ${s.unexpected} unexpected` : ''}${s.isUncached && s.distinctPathRatio < 0.98 ? ` (paths repeated: ${(s.distinctPathRatio * 100).toFixed(0)}% distinct)` : ''}`;
      lines.push(
        `| ${s.title}${flags} | ${s.connections} | ${fmt(s.requestsPerSecond)} | ${fmt(s.p50Ms, 2)} | ${fmt(s.p99Ms, 2)} | ${fmt(s.baselineRequestsPerSecond)} | ${fmt(s.ratio, 2)} | ${fmt(s.baselineP99Ms, 2)} | ${fmt(s.responseBytes)} | ${fmt(median(s.runs.map((run) => run.loadAverage)), 1)} | ${percent(median(s.runs.map((run) => run.steal)))} |`,
      );
    }
  }
  const withCpu = results.flatMap((r) =>
    r.scenarios.filter((sc) => sc.cpu).map((sc) => ({ corpus: r.corpus.label, scenario: sc, cpu: sc.cpu! })),
  );
  if (withCpu.length > 0) {
    lines.push(
      '',
      "## The server's CPU time a request",
      '',
      "Medians of the runs, from each thread's time in /proc: the event loop, the search workers (idle priority) and the other threads (V8's helpers, libuv's pool). \"Busy\" is all of it times the requests a second, in cores: near 1, the one core is what limits the scenario.",
      '',
      '| corpus | scenario | conn. | req/s | event loop ms | search workers ms | other threads ms | busy |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    const row = (corpus: string, title: string, connections: number, rps: number, cpu: ThreadCpu): string => {
      const total = cpu.eventLoopMs + cpu.searchWorkersMs + cpu.otherMs;
      return `| ${corpus} | ${title} | ${connections} | ${fmt(rps)} | ${fmt(cpu.eventLoopMs, 3)} | ${fmt(cpu.searchWorkersMs, 3)} | ${fmt(cpu.otherMs, 3)} | ${fmt((total * rps) / 1000, 2)} |`;
    };
    for (const { corpus, scenario: sc, cpu } of withCpu) {
      lines.push(row(corpus, sc.title, sc.connections, sc.requestsPerSecond, cpu));
      if (sc.referenceCpu && sc.referenceRequestsPerSecond !== undefined)
        lines.push(row(corpus, sc.referenceTitle ?? 'its reference runs', sc.connections, sc.referenceRequestsPerSecond, sc.referenceCpu));
    }
  }
  lines.push('', '## Machine notes', '', ...notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const loadBefore = os.loadavg();
  if (os.cpus().length < 2) log('warning: fewer than 2 CPUs; server and load generator will share one');
  mkdirSync(CACHE, { recursive: true });
  const build = prepareBuild(options);
  const load = await startIpcChild(LOAD_CPU, path.join(ROOT, 'bench', 'load-worker.ts'));
  const baseline = await startIpcChild(SERVER_CPU, path.join(ROOT, 'bench', 'baseline-server.ts'), { ...process.env, PORT: '0' });
  const results: CorpusResult[] = [];
  try {
    for (const label of options.corpora) results.push(await benchCorpus(label, build, options, load, baseline));
  } finally {
    load.child.disconnect();
    baseline.child.disconnect();
  }
  const targets = evaluateTargets(results);
  const notes = machineNotes(build, options, loadBefore, os.loadavg());
  const markdown = renderMarkdown(results, targets, notes, options);
  mkdirSync(RESULTS, { recursive: true });
  // Only a whole run of this checkout is a reference run; smoke, --only and --ref runs are kept
  // beside it under their own (git-ignored) names, so they never overwrite it.
  const kind = options.smoke ? '-smoke' : options.only !== undefined || options.ref !== undefined ? '-partial' : '';
  const name = `${new Date().toISOString().slice(0, 10)}${kind}`;
  writeFileSync(path.join(RESULTS, `${name}.md`), markdown);
  writeFileSync(path.join(RESULTS, `${name}.json`), `${JSON.stringify({ options, notes, targets, results }, null, 2)}\n`);
  process.stdout.write(`${markdown}\n`);
  log(`wrote bench/results/${name}.md and .json in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  // Every scenario's ratio needs both: the service's runs and its baseline's, each with answers of
  // the expected status (a run of only 503s or 404s measured nothing).
  const answeredNone = (r: LoadResult): boolean => r.requests - r.unexpected === 0;
  const failed = results
    .flatMap((r) => r.scenarios)
    .filter((s) => s.runs.every((run) => answeredNone(run.app)) || s.runs.every((run) => answeredNone(run.baseline)));
  if (failed.length > 0) {
    log(`no successful request (of the service or of its baseline) in: ${failed.map((s) => s.id).join(', ')}`);
    process.exitCode = 1;
  }
  // On Linux every run has its per-thread CPU figures, and searches run on the search workers: a
  // split that lost either (a /proc format or a worker priority that changed) fails the smoke run in CI.
  if (process.platform === 'linux') {
    const scenarios = results.flatMap((r) => r.scenarios);
    const unsplit = scenarios.filter((s) => !s.cpu || (s.id.startsWith('search-') && s.cpu.searchWorkersMs <= 0));
    if (unsplit.length > 0) {
      log(`no per-thread CPU split (or no search worker time) in: ${unsplit.map((s) => s.id).join(', ')}`);
      process.exitCode = 1;
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

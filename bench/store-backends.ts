/**
 * SQLite next to PostgreSQL, at the store (no HTTP, no representation cache): import time of a
 * whole content folder into an empty database, and the latency of searches, list pages and slug
 * lookups. Corpora: the sample content, and the deterministic 10k-guide corpus of bench/corpus.ts.
 * Each figure is a median over repeated runs, measured with a plain loop on this machine.
 *
 * Usage: `tsx bench/store-backends.ts [--sizes sample,10k] [--imports 3] [--repeats 30]`
 * PostgreSQL: TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test); each run makes
 * and drops its own database. Writes bench/results/store-backends.json and prints a Markdown table.
 */
import { mkdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SAMPLE_CONTENT_DIR } from '../src/config.js';
import { loadContentFolder } from '../src/content/load-content.js';
import type { ContentSet } from '../src/guides/guide.js';
import { parseSearchQuery } from '../src/guides/search-query.js';
import type { GuideStore } from '../src/store/guide-store.js';
import { createPostgresGuideStore } from '../src/store/postgres/postgres-guide-store.js';
import { createSqliteGuideStore } from '../src/store/sqlite/sqlite-guide-store.js';
import { createTestDatabase } from '../test/helpers/postgres-database.js';
import { CORPUS_VERSION, parseSize, writeCorpus } from './corpus.js';
import { median, percentile } from './lib/measure.js';

/** Typical searches: common and rare words, two words, a phrase, prefixes, a stop word. */
const QUERIES = [
  'temperature',
  'allergen',
  'menu costing',
  'walk-in cooler',
  '"danger zone"',
  'allerg',
  'sanit',
  'espresso barista',
  'waste compost',
  'staff schedule',
  'the',
  'supplier delivery',
  'pest',
  'cocktail pour cost',
  'thermometer calibration',
  'guest complaint',
];

interface Backend {
  name: 'sqlite' | 'postgres';
  open(): Promise<{ store: GuideStore; drop(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = path.join(tmpdir(), `guides-bench-${process.pid}-${Date.now()}`);
      mkdirSync(dir, { recursive: true });
      const store = createSqliteGuideStore(path.join(dir, 'guides.db'));
      return { store, drop: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'postgres',
    async open() {
      const database = await createTestDatabase();
      const store = createPostgresGuideStore({ connectionString: database.url, poolSize: 4 });
      return { store, drop: () => database.drop() };
    },
  },
];

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function loadCorpus(size: string): Promise<{ label: string; content: ContentSet }> {
  let dir = SAMPLE_CONTENT_DIR;
  if (size !== 'sample') {
    dir = path.join(tmpdir(), `guides-corpus-v${CORPUS_VERSION}-${parseSize(size)}`);
    if (!existsSync(path.join(dir, 'product.yaml'))) writeCorpus(dir, { size: parseSize(size) });
  }
  const loaded = await loadContentFolder(dir);
  if (!loaded.content) throw new Error(`corpus ${size} has problems: ${JSON.stringify(loaded.problems.slice(0, 3))}`);
  return {
    label:
      size === 'sample' ? `sample (${loaded.content.guides.length} guides)` : `${size} corpus (${loaded.content.guides.length} guides)`,
    content: loaded.content,
  };
}

interface Figures {
  importMs: number;
  searchMedianMs: number;
  searchP95Ms: number;
  deepSearchMedianMs: number;
  listMedianMs: number;
  deepListMedianMs: number;
  detailMedianMs: number;
}

async function measure(backend: Backend, content: ContentSet, imports: number, repeats: number): Promise<Figures> {
  const importTimes: number[] = [];
  let kept: { store: GuideStore; drop(): Promise<void> } | undefined;
  for (let i = 0; i < imports; i += 1) {
    const opened = await backend.open();
    await opened.store.migrate();
    importTimes.push(await timed(() => opened.store.importContent(content)));
    if (i === imports - 1) kept = opened;
    else {
      await opened.store.close();
      await opened.drop();
    }
  }
  const { store, drop } = kept!;
  try {
    const published = content.guides.filter((g) => g.status === 'published').map((g) => g.slug);
    // Warm up caches and connections once, as a running server would be.
    for (const q of QUERIES) await store.searchPublishedGuides({ query: parseSearchQuery(q), limit: 20 });
    const perQuery: number[] = [];
    const all: number[] = [];
    const deep: number[] = [];
    for (const q of QUERIES) {
      const query = parseSearchQuery(q);
      const samples: number[] = [];
      for (let r = 0; r < repeats; r += 1) samples.push(await timed(() => store.searchPublishedGuides({ query, limit: 20 })));
      perQuery.push(median(samples));
      all.push(...samples);
      // A later page: keyset, so it should cost what the first page costs.
      const first = await store.searchPublishedGuides({ query, limit: 20 });
      if (first.next) {
        const after = first.next;
        for (let r = 0; r < Math.max(3, repeats / 3); r += 1)
          deep.push(await timed(() => store.searchPublishedGuides({ query, limit: 20, after })));
      }
    }
    const list: number[] = [];
    const deepList: number[] = [];
    const detail: number[] = [];
    const second = await store.listPublishedGuides({ limit: 20 });
    // A position 90% of the way down the list: keyset pages must not get slower with depth.
    const ordered = content.guides
      .filter((g) => g.status === 'published')
      .map((g) => ({ publishedMs: Date.parse(g.publishedAt!), slug: g.slug }))
      .sort((a, b) => b.publishedMs - a.publishedMs || Buffer.compare(Buffer.from(a.slug), Buffer.from(b.slug)));
    const deepPosition = ordered[Math.floor(ordered.length * 0.9)]!;
    for (let r = 0; r < repeats; r += 1) {
      list.push(await timed(() => store.listPublishedGuides({ limit: 20, ...(second.next ? { after: second.next } : {}) })));
      deepList.push(await timed(() => store.listPublishedGuides({ limit: 20, after: deepPosition })));
      detail.push(await timed(() => store.getPublishedGuide(published[(r * 7919) % published.length]!)));
    }
    return {
      importMs: median(importTimes),
      searchMedianMs: median(perQuery),
      searchP95Ms: percentile(all, 0.95),
      deepSearchMedianMs: deep.length > 0 ? median(deep) : NaN,
      listMedianMs: median(list),
      deepListMedianMs: median(deepList),
      detailMedianMs: median(detail),
    };
  } finally {
    await store.close();
    await drop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: 'sample,10k' },
      imports: { type: 'string', default: '3' },
      repeats: { type: 'string', default: '30' },
    },
  });
  const results: { corpus: string; backend: string; figures: Figures }[] = [];
  // Other work on the machine moves every figure: the load average is kept next to them.
  const loadBefore = loadavg()[0]!;
  for (const size of values.sizes.split(',')) {
    const { label, content } = await loadCorpus(size.trim());
    const imports = size === 'sample' ? Number(values.imports) : Math.min(Number(values.imports), 3);
    for (const backend of backends) {
      console.error(`measuring ${backend.name} on ${label} …`);
      results.push({ corpus: label, backend: backend.name, figures: await measure(backend, content, imports, Number(values.repeats)) });
    }
  }
  const f = (ms: number): string => (Number.isNaN(ms) ? '–' : ms >= 100 ? ms.toFixed(0) : ms.toFixed(2));
  console.log(
    '| corpus | backend | import (ms) | search median (ms) | search p95 (ms) | later search page (ms) | list page 2 (ms) | list page at 90% (ms) | slug lookup (ms) |',
  );
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const { corpus, backend, figures: m } of results) {
    console.log(
      `| ${corpus} | ${backend} | ${f(m.importMs)} | ${f(m.searchMedianMs)} | ${f(m.searchP95Ms)} | ${f(m.deepSearchMedianMs)} | ${f(m.listMedianMs)} | ${f(m.deepListMedianMs)} | ${f(m.detailMedianMs)} |`,
    );
  }
  const loadAfter = loadavg()[0]!;
  console.log(`\n1-minute load average: ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (2 cores).`);
  const out = path.resolve(import.meta.dirname, 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(
    path.join(out, 'store-backends.json'),
    `${JSON.stringify({ measuredAt: new Date().toISOString(), node: process.version, loadAverage: { before: loadBefore, after: loadAfter }, queries: QUERIES, results }, null, 2)}\n`,
  );
}

await main();

/**
 * Deterministic benchmark corpus: a content folder (product.yaml, resources.yaml, guides/*.md)
 * with `size` guides written like real ones (bench/guide-markdown.ts: tables, links, lists, code,
 * `_` and `*` emphasis, entities, quotes). Everything comes from one seeded PRNG, so the same size,
 * seed and CORPUS_VERSION give byte-identical files on every machine; each guide is written as
 * soon as it is made, so a corpus of any size takes the memory of one guide (and the slugs).
 *
 * Text model (bench/vocabulary.ts): 60,000+ distinct words (function words, real cooking and
 * restaurant words, pronounceable pseudo-words) drawn from a Zipf distribution, mixed with topic
 * terms so that each guide is about something (its title and summary name its topic, its body
 * repeats it). Bodies have 200–3,000 words (median ~700); 1–3 tags; ~5% retained or archived.
 *
 * Usage: `tsx bench/corpus.ts <size: 1k|10k|100k|number> <dir>`
 */
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGuideWriter } from './guide-markdown.js';
import { ACCENTED_WORDS, DEFAULT_SEED, TOPICS, buildVocabulary, createRandom, zipfWord } from './vocabulary.js';
import type { Vocabulary } from './vocabulary.js';

export { buildVocabulary, createRandom } from './vocabulary.js';
export type { Vocabulary } from './vocabulary.js';

/** Bump when the generated text changes, so cached corpora and databases are rebuilt. */
export const CORPUS_VERSION = 3;

/** Running-text words a body aims at; its numbers, code spans and table cells bring it to 200–3,000 words as counted. */
const MIN_BODY_WORDS = 200;
const MAX_BODY_WORDS = 2700;

const TAG_EXTRAS = ['small-business', 'checklists', 'beginners', 'compliance', 'front-of-house', 'back-of-house', 'training', 'operations'];

export interface CorpusSpec {
  /** Number of guide files. */
  size: number;
  /** PRNG seed; the default gives the published benchmark corpora. */
  seed?: number;
}

const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/** Makes guide files one at a time, each from the shared PRNG stream. */
function createGuideMaker(vocabulary: Vocabulary, random: () => number): () => { slug: string; file: string } {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const topicNames = Object.keys(TOPICS);
  const usedSlugs = new Set<string>();
  const authors = vocabulary.words.slice(500, 5000);
  // The current guide's words: its focus terms often, its topics' terms sometimes, Zipf otherwise.
  let focus: string[] = [];
  let topicWords: string[] = [];
  let favourites: string[] = [];
  const word = (): string => {
    const u = random();
    if (u < 0.05) return pick(focus);
    if (u < 0.09) return pick(topicWords);
    if (u < 0.1) return pick(favourites);
    return zipfWord(vocabulary, random);
  };
  const writer = createGuideWriter({ random, word, accented: () => pick(ACCENTED_WORDS) });

  return () => {
    const topic = pick(topicNames);
    const secondTopic = pick(topicNames);
    topicWords = [...(TOPICS[topic] as string[]), ...(TOPICS[secondTopic] as string[]).slice(0, 4)];
    focus = [pick(topicWords.slice(0, 6)), pick(topicWords), pick(topicWords)];
    favourites = [zipfWord(vocabulary, random), zipfWord(vocabulary, random)];
    const phrase = (count: number): string[] => Array.from({ length: count }, word);

    const titleWords = [
      focus[0] as string,
      ...phrase(1 + Math.floor(random() * 3)),
      pick(focus),
      ...(random() < 0.5 ? [pick(topicWords)] : []),
    ];
    const title = titleWords.map((w, i) => (i === 0 || w.length > 3 ? capitalize(w) : w)).join(' ');
    let base = title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80)
      .replace(/-+$/, '');
    if (base === '') base = 'guide';
    let slug = base;
    for (let n = 2; usedSlugs.has(slug); n += 1) slug = `${base}-${n}`;
    usedSlugs.add(slug);
    const summary = `${capitalize([pick(focus), ...phrase(10 + Math.floor(random() * 14)), pick(topicWords)].join(' '))}.`;
    const targetWords = MIN_BODY_WORDS + Math.floor(random() ** 2.5 * (MAX_BODY_WORDS - MIN_BODY_WORDS));
    const body = writer.body(targetWords, title);

    const statusDraw = random();
    const status = statusDraw < 0.02 ? 'retained' : statusDraw < 0.05 ? 'archived' : 'published';
    // Published over ~11 years, to the second; a third were updated later.
    const publishedMs = Date.UTC(2015, 0, 1) + Math.floor(random() * 11 * 365 * 86_400) * 1000;
    const updatedMs = random() < 0.33 ? publishedMs + Math.floor(random() * 400 * 86_400) * 1000 : undefined;
    const tags = [...new Set([topic, ...(random() < 0.6 ? [secondTopic] : []), ...(random() < 0.4 ? [pick(TAG_EXTRAS)] : [])])];
    const front = [
      '---',
      `title: ${JSON.stringify(title)}`,
      `summary: ${JSON.stringify(summary)}`,
      ...(status === 'published' ? [] : [`status: ${status}`]),
      `publishedAt: ${iso(publishedMs)}`,
      ...(updatedMs === undefined ? [] : [`updatedAt: ${iso(updatedMs)}`]),
      `tags: [${tags.join(', ')}]`,
      ...(random() < 0.5 ? [`author: ${JSON.stringify(`${capitalize(pick(authors))} ${capitalize(pick(authors))}`)}`] : []),
      ...(random() < 0.2 ? [`canonicalUrl: https://guides.example.com/${slug}`] : []),
      '---',
      '',
    ];
    return { slug, file: `${front.join('\n')}${body}` };
  };
}

const PRODUCT_YAML = `name: Restaurant Guides (benchmark corpus)
description: Generated guides for load and relevance benchmarks of the Restaurant Guides API.
homepage: https://guides.example.com
contact:
  name: Benchmark
  url: https://guides.example.com/contact
  email: bench@guides.example.com
license:
  name: CC BY 4.0
  url: https://creativecommons.org/licenses/by/4.0/
`;

const RESOURCES_YAML = `links:
  - rel: terms-of-service
    href: https://guides.example.com/terms
    title: Terms of use for the guides and the API
    type: text/html
  - rel: help
    href: https://guides.example.com/help
    title: Help and contact for API users
    type: text/html
`;

/** Writes the corpus into `dir` (which is emptied first), one guide file at a time. */
export function writeCorpus(dir: string, spec: CorpusSpec): { guides: number; bytes: number } {
  const seed = spec.seed ?? DEFAULT_SEED;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'guides'), { recursive: true });
  writeFileSync(path.join(dir, 'product.yaml'), PRODUCT_YAML);
  writeFileSync(path.join(dir, 'resources.yaml'), RESOURCES_YAML);
  const nextGuide = createGuideMaker(buildVocabulary(seed), createRandom(seed));
  let bytes = 0;
  for (let i = 0; i < spec.size; i += 1) {
    const guide = nextGuide();
    const fd = openSync(path.join(dir, 'guides', `${guide.slug}.md`), 'w');
    try {
      bytes += writeSync(fd, guide.file);
    } finally {
      closeSync(fd);
    }
  }
  return { guides: spec.size, bytes };
}

export function parseSize(value: string): number {
  const match = /^(\d+)(k?)$/i.exec(value.trim());
  if (!match) throw new Error(`corpus size must be like 1k, 10k, 100k or a number, not ${value}`);
  return Number(match[1]) * (match[2] ? 1000 : 1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [sizeText, dir] = process.argv.slice(2);
  if (!sizeText || !dir) {
    console.error('usage: tsx bench/corpus.ts <1k|10k|100k|N> <dir>');
    process.exit(2);
  }
  const started = performance.now();
  const { guides, bytes } = writeCorpus(path.resolve(dir), { size: parseSize(sizeText) });
  console.log(
    `wrote ${guides} guides (${(bytes / 1e6).toFixed(1)} MB) to ${dir} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

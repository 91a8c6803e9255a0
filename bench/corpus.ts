/**
 * Deterministic benchmark corpus: a content folder (product.yaml, resources.yaml, guides/*.md)
 * with `size` guides of realistic-looking text. Everything comes from one seeded PRNG, so the same
 * size and CORPUS_VERSION always give byte-identical files on every machine.
 *
 * Text model: a vocabulary of ~40,000 generated words plus English function words and restaurant
 * terms, drawn from a Zipf distribution (s ≈ 1.05), mixed with topic terms so that each guide is
 * about something (its title and summary name its topic, its body repeats it). Guides have 300–2,000
 * body words in sections with headings, paragraphs and lists; 1–4 tags; ~5% retained or archived.
 *
 * Usage: `tsx bench/corpus.ts <size: 1k|10k|100k|number> <dir>`
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bump when the generated text changes, so cached corpora and databases are rebuilt. */
export const CORPUS_VERSION = 2;

/** mulberry32: small, fast, good enough for text generation, and identical on every platform. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FUNCTION_WORDS = `the of and to a in is for that it on with as be are this by at or from have not you your
an can was but they their will more each one all when if which should what so there than about any into
also only out up them before after most some other use how these may every time been has were its where
each must because first two then over new while those such make keep both just much through used very
many same well day per three week between under still without during good need within back right often`
  .split(/\s+/).filter((word, index, all) => word !== '' && all.indexOf(word) === index);

/** Restaurant vocabulary, grouped by topic; the first words of a group are its strongest signals. */
const TOPICS: Record<string, string[]> = {
  'food-safety': ['temperature', 'thermometer', 'bacteria', 'pathogen', 'contamination', 'sanitize', 'hygiene', 'danger', 'zone', 'cooling', 'reheating', 'probe', 'log'],
  allergens: ['allergen', 'allergy', 'peanut', 'gluten', 'shellfish', 'label', 'matrix', 'cross-contact', 'celiac', 'sesame', 'dairy', 'egg'],
  'menu-engineering': ['menu', 'dish', 'margin', 'popularity', 'contribution', 'star', 'plowhorse', 'puzzle', 'dog', 'placement', 'description', 'price'],
  costing: ['cost', 'recipe', 'yield', 'portion', 'plate', 'ingredient', 'invoice', 'percentage', 'budget', 'variance', 'spreadsheet'],
  inventory: ['inventory', 'stock', 'count', 'par', 'shelf', 'storage', 'rotation', 'fifo', 'walk-in', 'freezer', 'cooler', 'order'],
  staffing: ['staff', 'schedule', 'shift', 'labor', 'hiring', 'training', 'onboarding', 'turnover', 'server', 'cook', 'manager', 'payroll'],
  service: ['guest', 'table', 'reservation', 'host', 'seating', 'turn', 'complaint', 'tip', 'service', 'waiter', 'check', 'experience'],
  kitchen: ['kitchen', 'station', 'line', 'prep', 'mise', 'knife', 'grill', 'fryer', 'oven', 'burner', 'equipment', 'hood'],
  beverage: ['bar', 'wine', 'beer', 'cocktail', 'spirit', 'pour', 'glassware', 'coffee', 'espresso', 'barista', 'keg', 'liquor'],
  marketing: ['marketing', 'social', 'review', 'loyalty', 'promotion', 'brand', 'newsletter', 'campaign', 'photo', 'website', 'community', 'event'],
  sustainability: ['waste', 'compost', 'recycling', 'energy', 'water', 'packaging', 'sourcing', 'local', 'seasonal', 'farm', 'supplier', 'donation'],
  cleaning: ['cleaning', 'sanitizer', 'chemical', 'dishwasher', 'floor', 'drain', 'grease', 'trap', 'pest', 'rodent', 'schedule', 'checklist'],
  finance: ['revenue', 'profit', 'loss', 'cash', 'sales', 'forecast', 'rent', 'lease', 'insurance', 'tax', 'accountant', 'prime'],
  baking: ['bread', 'dough', 'pastry', 'flour', 'butter', 'oven', 'proof', 'croissant', 'cake', 'sugar', 'yeast', 'laminate'],
  purchasing: ['supplier', 'vendor', 'delivery', 'receiving', 'negotiation', 'contract', 'produce', 'meat', 'seafood', 'quote', 'catalog', 'case'],
};

/** Restaurant words nearly every guide uses. */
const GENERAL_TERMS = ['food', 'restaurant', 'kitchen', 'staff', 'guest', 'menu', 'service', 'team', 'cost', 'order'];

const TAG_EXTRAS = ['small-business', 'checklists', 'beginners', 'compliance', 'front-of-house', 'back-of-house', 'training', 'operations'];

const ONSETS = ['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z', 'br', 'cl', 'dr', 'fr', 'gr', 'pl', 'pr', 'sh', 'st', 'tr', 'ch', 'th', 'sp', 'bl'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'ou', 'ie', 'oa'];
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 't', 'm', 'nd', 'st', 'rt', 'ck', 'ng'];
const SUFFIXES = ['s', 'ing', 'ed', 'er', 'ment', 'ness', 'ly', 'ion'];

export interface CorpusSpec {
  /** Number of guide files. */
  size: number;
  /** PRNG seed; the default gives the published benchmark corpora. */
  seed?: number;
}

export interface Vocabulary {
  /** Words by Zipf rank (index 0 is the most frequent). */
  words: string[];
  /** Cumulative probabilities, same order. */
  cdf: Float64Array;
  /** Topic terms (real restaurant words), flattened. */
  topicTerms: string[];
}

/** Builds the ranked vocabulary and its Zipf CDF; the same for every corpus size. */
export function buildVocabulary(seed = 20_260_101, pseudoWordCount = 40_000): Vocabulary {
  const random = createRandom(seed ^ 0x5eed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const topicTerms = [...new Set([...GENERAL_TERMS, ...Object.values(TOPICS).flat()])];
  const taken = new Set<string>([...FUNCTION_WORDS, ...topicTerms]);
  const pseudo: string[] = [];
  while (pseudo.length < pseudoWordCount) {
    const syllables = 1 + Math.floor(random() * 3.2);
    let word = '';
    for (let i = 0; i < syllables; i += 1) word += pick(ONSETS) + pick(VOWELS) + (i === syllables - 1 ? pick(CODAS) : '');
    if (word.length < 3 || taken.has(word)) continue;
    taken.add(word);
    pseudo.push(word);
    // Morphological variants share a stem with their base word, as real vocabularies do.
    if (random() < 0.25) {
      const variant = word + pick(SUFFIXES);
      if (!taken.has(variant)) {
        taken.add(variant);
        pseudo.push(variant);
      }
    }
  }
  // Ranks: function words first with the general restaurant words among them (so those match most
  // guides, as "food" does in a real corpus of restaurant guides), then the other restaurant terms
  // spread over ranks up to ~3,000, then generated words.
  const words: string[] = [...FUNCTION_WORDS];
  GENERAL_TERMS.forEach((term, index) => words.splice(6 + index * 5, 0, term));
  const general = new Set(GENERAL_TERMS);
  const specific = topicTerms.filter((term) => !general.has(term));
  const placed = new Map<number, string>();
  specific.forEach((term, index) => {
    let rank = Math.floor(words.length + 5 + (index / specific.length) ** 2 * 3000 + random() * 40);
    while (placed.has(rank)) rank += 1;
    placed.set(rank, term);
  });
  const rest = pseudo.slice(0, pseudoWordCount);
  let next = 0;
  const lastPlaced = Math.max(...placed.keys());
  for (let rank = words.length; next < rest.length || rank <= lastPlaced; rank += 1) {
    const term = placed.get(rank);
    if (term !== undefined) words.push(term);
    else if (next < rest.length) words.push(rest[next++] as string);
  }
  const cdf = new Float64Array(words.length);
  let total = 0;
  for (let i = 0; i < words.length; i += 1) {
    total += 1 / (i + 1) ** 1.05;
    cdf[i] = total;
  }
  for (let i = 0; i < cdf.length; i += 1) cdf[i] = (cdf[i] as number) / total;
  return { words, cdf, topicTerms };
}

function zipfWord(vocabulary: Vocabulary, random: () => number): string {
  const u = random();
  const { cdf } = vocabulary;
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cdf[mid] as number) < u) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary.words[lo] as string;
}

const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

interface GuideText {
  slug: string;
  file: string;
}

function generateGuide(index: number, vocabulary: Vocabulary, random: () => number, usedSlugs: Set<string>): GuideText {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const topicNames = Object.keys(TOPICS);
  const topic = pick(topicNames);
  const secondTopic = pick(topicNames);
  const topicWords = [...(TOPICS[topic] as string[]), ...(TOPICS[secondTopic] as string[]).slice(0, 4)];
  // Each guide leans on a few favourite topic words and a few favourite rare words.
  const focus = [pick(topicWords.slice(0, 6)), pick(topicWords), pick(topicWords)];
  const favourites = [zipfWord(vocabulary, random), zipfWord(vocabulary, random)];
  const word = (): string => {
    const u = random();
    if (u < 0.05) return pick(focus);
    if (u < 0.09) return pick(topicWords);
    if (u < 0.1) return pick(favourites);
    return zipfWord(vocabulary, random);
  };
  const phrase = (count: number): string[] => Array.from({ length: count }, word);
  const sentence = (): string => {
    const words = phrase(8 + Math.floor(random() * 18));
    return `${capitalize(words.join(' '))}${random() < 0.1 ? '?' : '.'}`;
  };

  const titleWords = [capitalize(focus[0] as string), ...phrase(1 + Math.floor(random() * 3)), pick(focus), ...(random() < 0.5 ? [pick(topicWords)] : [])];
  const title = titleWords.map((w, i) => (i === 0 || w.length > 3 ? capitalize(w) : w)).join(' ');
  let base = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80).replace(/-+$/, '');
  if (base === '') base = 'guide';
  let slug = base;
  for (let n = 2; usedSlugs.has(slug); n += 1) slug = `${base}-${n}`;
  usedSlugs.add(slug);
  const summary = `${capitalize([pick(focus), ...phrase(10 + Math.floor(random() * 14)), pick(topicWords)].join(' '))}.`;

  const targetWords = 300 + Math.floor(random() ** 1.6 * 1700);
  const parts: string[] = [`# ${title}`, '', Array.from({ length: 2 + Math.floor(random() * 3) }, sentence).join(' ')];
  let written = 0;
  while (written < targetWords) {
    const heading = capitalize([pick(topicWords), ...phrase(1 + Math.floor(random() * 3))].join(' '));
    parts.push('', `${random() < 0.8 ? '##' : '###'} ${heading}`);
    written += heading.split(' ').length;
    const blocks = 1 + Math.floor(random() * 4);
    for (let b = 0; b < blocks && written < targetWords; b += 1) {
      if (random() < 0.22) {
        const items = 3 + Math.floor(random() * 5);
        const ordered = random() < 0.3;
        parts.push('');
        for (let i = 0; i < items; i += 1) {
          const item = phrase(3 + Math.floor(random() * 9));
          written += item.length;
          const text = capitalize(item.join(' '));
          parts.push(`${ordered ? `${i + 1}.` : '-'} ${random() < 0.2 ? `**${text}**` : text}`);
        }
      } else {
        const sentences = Array.from({ length: 2 + Math.floor(random() * 5) }, sentence);
        written += sentences.reduce((sum, s) => sum + s.split(' ').length, 0);
        parts.push('', sentences.join(' '));
      }
    }
  }

  const statusDraw = random();
  const status = statusDraw < 0.02 ? 'retained' : statusDraw < 0.05 ? 'archived' : 'published';
  // Published over ~11 years, to the second; a third were updated later.
  const publishedMs = Date.UTC(2015, 0, 1) + Math.floor(random() * 11 * 365 * 86_400) * 1000;
  const updatedMs = random() < 0.33 ? publishedMs + Math.floor(random() * 400 * 86_400) * 1000 : undefined;
  const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
  const tags = [...new Set([topic, ...(random() < 0.6 ? [secondTopic] : []), ...(random() < 0.4 ? [pick(TAG_EXTRAS)] : [])])];
  const front = [
    '---',
    `title: ${JSON.stringify(title)}`,
    `summary: ${JSON.stringify(summary)}`,
    ...(status === 'published' ? [] : [`status: ${status}`]),
    `publishedAt: ${iso(publishedMs)}`,
    ...(updatedMs === undefined ? [] : [`updatedAt: ${iso(updatedMs)}`]),
    `tags: [${tags.join(', ')}]`,
    ...(random() < 0.5 ? [`author: ${JSON.stringify(`${capitalize(pick(vocabulary.words.slice(500, 5000)))} ${capitalize(pick(vocabulary.words.slice(500, 5000)))}`)}`] : []),
    ...(random() < 0.2 ? [`canonicalUrl: https://guides.example.com/${slug}`] : []),
    '---',
    '',
  ];
  void index;
  return { slug, file: `${front.join('\n')}${parts.join('\n')}\n` };
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

/** Writes the corpus into `dir` (which is emptied first); returns the slugs of the guides written. */
export function writeCorpus(dir: string, spec: CorpusSpec): { slugs: string[]; bytes: number } {
  const seed = spec.seed ?? 20_260_101;
  const vocabulary = buildVocabulary(seed);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'guides'), { recursive: true });
  writeFileSync(path.join(dir, 'product.yaml'), PRODUCT_YAML);
  writeFileSync(path.join(dir, 'resources.yaml'), RESOURCES_YAML);
  const random = createRandom(seed);
  const used = new Set<string>();
  const slugs: string[] = [];
  let bytes = 0;
  for (let i = 0; i < spec.size; i += 1) {
    const guide = generateGuide(i, vocabulary, random, used);
    writeFileSync(path.join(dir, 'guides', `${guide.slug}.md`), guide.file);
    slugs.push(guide.slug);
    bytes += guide.file.length;
  }
  return { slugs, bytes };
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
  const { slugs, bytes } = writeCorpus(path.resolve(dir), { size: parseSize(sizeText) });
  console.log(`wrote ${slugs.length} guides (${(bytes / 1e6).toFixed(1)} MB) to ${dir} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

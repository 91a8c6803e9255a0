/**
 * The benchmark's searches, as users type them: typical 2–3 word queries of topic and everyday
 * words, common terms that match most guides, and short prefixes (2–4 letters, what a search box
 * sends while one types); limits from 1 to 50, or none (the default page). Deterministic.
 */
import { COOKING_WORDS, TOPICS, buildVocabulary, createRandom } from './vocabulary.js';

export const SEARCH_KINDS = ['typical', 'common', 'prefix'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

/** The most frequent words (function words and the general restaurant words): each matches most guides. */
const COMMON_RANKS = 60;

/** `count` distinct request paths (`/api/v1/guides?q=…[&limit=…]`) of one kind, the same on every machine. */
export function searchPaths(kind: SearchKind, count: number, seed = 4242): string[] {
  const { words } = buildVocabulary();
  const random = createRandom(seed + SEARCH_KINDS.indexOf(kind));
  const between = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const rank = (from: number, to: number): string => words[between(from, Math.min(to, words.length) - 1)] as string;
  // Typical words: real restaurant and cooking words most often, else mid-frequency words (ranks up
  // to ~4,000, where the real words are ranked too), now and then one from the long tail.
  const real = [...new Set([...Object.values(TOPICS).flat(), ...COOKING_WORDS])];
  const typicalWord = (): string => {
    const roll = random();
    return roll < 0.45 ? (real[between(0, real.length - 1)] as string) : roll < 0.85 ? rank(COMMON_RANKS, 4000) : rank(4000, 30_000);
  };
  const text = (): string => {
    switch (kind) {
      case 'typical':
        return Array.from({ length: random() < 0.6 ? 2 : 3 }, (_, i) =>
          i > 0 && random() < 0.3 ? rank(0, COMMON_RANKS) : typicalWord(),
        ).join(' ');
      case 'common':
        return Array.from({ length: [1, 2, 2, 3][between(0, 3)] as number }, () => rank(0, COMMON_RANKS)).join(' ');
      case 'prefix': {
        const word = rank(COMMON_RANKS, 20_000);
        const prefix = word.slice(0, Math.min(word.length, between(2, 4)));
        return random() < 0.5 ? prefix : `${typicalWord()} ${prefix}`;
      }
    }
  };
  const paths = new Set<string>();
  for (let attempts = 0; paths.size < count && attempts < count * 20; attempts += 1) {
    const limit = random() < 0.3 ? undefined : between(1, 50);
    paths.add(`/api/v1/guides?q=${encodeURIComponent(text())}${limit === undefined ? '' : `&limit=${limit}`}`);
  }
  return [...paths];
}

/**
 * Text → search tokens for the embedded search index: the same rules for guides at import and for
 * query words, so both sides always agree. Words are runs of letters, digits and combining marks
 * (as in parseSearchQuery); each is NFKC-normalized, lowercased, stripped of diacritics and reduced
 * by the Porter stemmer (English), as SQLite's `porter unicode61 remove_diacritics 2` tokenizer does.
 */
import { stemmer } from 'stemmer';

const WORD_PARTS = /[\p{L}\p{N}\p{M}]+/gu;
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const PLAIN = /^[a-z0-9]+$/;
const MARKS = /\p{M}/gu;

/** 1 for ASCII letters and digits, 0 for other ASCII; the tokenizer's hot loop reads this table. */
export const ASCII_WORD = new Uint8Array(128);
for (let code = 0; code < 128; code += 1) ASCII_WORD[code] = /[A-Za-z0-9]/.test(String.fromCharCode(code)) ? 1 : 0;

/** Whether the code unit `code` at `index` of `text` starts a word character (letter, digit or mark). */
export function isWordCode(text: string, index: number, code: number): boolean {
  if (code < 128) return ASCII_WORD[code] === 1;
  // Surrogate pairs (such as mathematical letters) are tested as one code point.
  const codePoint = text.codePointAt(index) as number;
  return WORD_CHAR.test(String.fromCodePoint(codePoint));
}

/** Porter only stems plain ASCII words of this length range (SQLite's limits). */
const STEM_MIN = 3;
const STEM_MAX = 64;

/**
 * Stems and normalized forms of the guides' words are memoized: a corpus's vocabulary is small
 * next to the text it comes from. Query words are not (see wordTokens): anyone can send words no
 * guide holds, and a stream of distinct ones would keep the search worker's memo full
 * (docs/performance.md, "Search").
 */
const MEMO_LIMIT = 200_000;
const memo = new Map<string, string[]>();

/**
 * One word of a guide's text → its tokens (usually one; none when nothing but marks remains;
 * several when normalization splits it, as `½` → `1`, `2`). Memoized.
 */
export function tokensOfWord(word: string): string[] {
  const known = memo.get(word);
  if (known) return known;
  const tokens = wordTokens(word);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(word, tokens);
  return tokens;
}

/** One word → its tokens, as tokensOfWord but kept nowhere: for query words (a stemmed word costs microseconds, a search hundreds). */
export function wordTokens(word: string): string[] {
  const lower = word.toLowerCase();
  if (PLAIN.test(lower)) return [stemWord(lower)];
  const folded = lower.normalize('NFKC').toLowerCase().normalize('NFD').replace(MARKS, '').normalize('NFC');
  return (folded.match(WORD_PARTS) ?? []).map((part) => (PLAIN.test(part) ? stemWord(part) : part));
}

/**
 * Calls `onWord(start, end)` for every word of `text` from `from` (a word start): the UTF-16 span
 * of a maximal run of letters, digits and marks. Stops when `onWord` returns false.
 */
export function forEachWord(text: string, onWord: (start: number, end: number) => boolean | void, from = 0): void {
  const length = text.length;
  let index = from;
  while (index < length) {
    let code = text.charCodeAt(index);
    if (code < 128 ? ASCII_WORD[code] === 0 : !isWordCode(text, index, code)) {
      index += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
      continue;
    }
    const start = index;
    while (index < length) {
      code = text.charCodeAt(index);
      if (code < 128) {
        if (ASCII_WORD[code] === 0) break;
        index += 1;
      } else {
        if (!isWordCode(text, index, code)) break;
        index += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
      }
    }
    if (onWord(start, index) === false) return;
  }
}

/** What WordTable.get answers for a word it does not hold. */
export const ABSENT = -0x80000000;

/** Int32s per WordTable slot. */
const SLOT = 4;

/**
 * A hash table from words to integers that never slices the text to look a word up: the index
 * build meets every word of every guide, and slicing plus Map lookups cost several times more than
 * scanning the characters once. A slot holds everything a lookup needs (hash, key position and
 * length, value) in one typed array, so a lookup touches the slot's cache line and the key's
 * characters, nothing else: with a wide vocabulary the table outgrows the caches, and each extra
 * array read was another miss. Keys are copied into one character pool and compared character by
 * character; `hash` is the FNV-1a hash of the word's UTF-16 code units.
 */
export class WordTable {
  private capacity = 1 << 16;
  /** SLOT Int32s per slot: the key's hash, its start in `chars` + 1 (0: empty), its length, its value. */
  private slots = new Int32Array(this.capacity * SLOT);
  private size = 0;
  private chars = new Uint16Array(1 << 16);
  private charCount = 0;

  /** The value of the word text[start, end), or ABSENT. */
  get(text: string, start: number, end: number, hash: number): number {
    const slots = this.slots;
    const wrap = this.capacity * SLOT - 1;
    const length = end - start;
    for (let slot = (hash & (this.capacity - 1)) * SLOT; ; slot = (slot + SLOT) & wrap) {
      const keyStart = slots[slot + 1] as number;
      if (keyStart === 0) return ABSENT;
      if (slots[slot] !== hash || slots[slot + 2] !== length) continue;
      const chars = this.chars;
      const from = keyStart - 1;
      let i = 0;
      while (i < length && chars[from + i] === text.charCodeAt(start + i)) i += 1;
      if (i === length) return slots[slot + 3] as number;
    }
  }

  set(word: string, hash: number, value: number): void {
    if (this.charCount + word.length > this.chars.length) {
      const grown = new Uint16Array(Math.max(this.chars.length * 2, this.charCount + word.length));
      grown.set(this.chars);
      this.chars = grown;
    }
    for (let i = 0; i < word.length; i += 1) this.chars[this.charCount + i] = word.charCodeAt(i);
    this.size += 1;
    if (this.size * 2 > this.capacity) this.grow();
    this.place(this.slots, hash, this.charCount + 1, word.length, value);
    this.charCount += word.length;
  }

  private place(slots: Int32Array, hash: number, keyStart: number, length: number, value: number): void {
    const mask = this.capacity - 1;
    let slot = hash & mask;
    while (slots[slot * SLOT + 1] !== 0) slot = (slot + 1) & mask;
    slots[slot * SLOT] = hash;
    slots[slot * SLOT + 1] = keyStart;
    slots[slot * SLOT + 2] = length;
    slots[slot * SLOT + 3] = value;
  }

  private grow(): void {
    const old = this.slots;
    this.capacity *= 2;
    this.slots = new Int32Array(this.capacity * SLOT);
    for (let slot = 0; slot < old.length; slot += SLOT) {
      const keyStart = old[slot + 1] as number;
      if (keyStart !== 0) this.place(this.slots, old[slot] as number, keyStart, old[slot + 2] as number, old[slot + 3] as number);
    }
  }
}

/** FNV-1a, as WordTable's keys are hashed: start from FNV_OFFSET, then `hash = Math.imul(hash ^ codeUnit, FNV_PRIME)` per code unit. */
export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;

/**
 * Calls `onToken(token, start, end)` for every token of `text` from `from` (a word start), with the
 * UTF-16 span of its word; stops when `onToken` returns false.
 */
export function forEachToken(text: string, onToken: (token: string, start: number, end: number) => boolean | void, from = 0): void {
  forEachWord(
    text,
    (start, end) => {
      const tokens = tokensOfWord(text.slice(start, end));
      for (let i = 0; i < tokens.length; i += 1) if (onToken(tokens[i] as string, start, end) === false) return false;
      return true;
    },
    from,
  );
}

/** True when text[start, end) is plain ASCII letters and digits: one token, no normalization needed. */
export function isPlainWord(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i += 1) {
    const code = text.charCodeAt(i);
    if (code >= 128 || ASCII_WORD[code] === 0) return false;
  }
  return true;
}

/** The tokens of `text`, in order. */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  forEachToken(text, (token) => {
    tokens.push(token);
  });
  return tokens;
}

/**
 * The Porter stem of a lowercase ASCII word; other words are returned unchanged. The `stemmer`
 * package is Porter's 1980 algorithm as in his reference implementation (with its "bli"→"ble" and
 * "logi"→"log" departures, which SQLite's porter tokenizer shares); the guard is SQLite's too.
 */
export function stemWord(input: string): string {
  if (input.length < STEM_MIN || input.length > STEM_MAX || !PLAIN.test(input) || /[0-9]/.test(input)) return input;
  return stemmer(input);
}

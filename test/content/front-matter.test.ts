/**
 * The front matter fast path must give exactly what gray-matter with the YAML parser gives, for
 * every file it reads, and must decline every file it cannot read exactly.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import matter from 'gray-matter';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { writeCorpus } from '../../bench/corpus.js';
import { SAMPLE_CONTENT_DIR } from '../../src/config.js';
import { simpleFrontMatter } from '../../src/content/front-matter.js';
import { FRONT_MATTER_FIELDS } from '../../src/content/parse-guide-file.js';
import { makeTempDir } from '../helpers/build-test-app.js';

/** What parseGuideFile got before the fast path: gray-matter's data and content, or the error. */
function slowPath(source: string): { data: unknown; body: string } | 'error' {
  try {
    const parsed = matter(source, { engines: { yaml: (text: string) => parseYaml(text) as object } });
    return { data: parsed.data, body: parsed.content };
  } catch {
    return 'error';
  }
}

function expectSame(source: string): boolean {
  const fast = simpleFrontMatter(source, FRONT_MATTER_FIELDS);
  if (!fast) return false;
  expect(slowPath(source), source).toEqual(fast);
  return true;
}

const goodPlain = fc.constantFrom(
  'food',
  'Food safety',
  'a  b',
  'x:y',
  'https://guides.example.com/a?b=c&d=e',
  '2026-01-01',
  '2026-01-01T09:00:00Z',
  '2026-01-01 09:00:00',
  'fr-CA',
  'small-business',
  'Ana',
  'a-b_c.d',
  'published',
  'retained',
  '1_000',
  '1:20',
  'v1.2',
  'e1',
  'x@y.z',
  '100%',
  'Build a matrix, take orders and hand over.',
  "it's",
  'a "b" c',
  'a [b] {c}',
  'café crème',
  'a & b | c > d',
  'x*y',
  'a!',
  'é',
  'Ünïcode',
  '日本語',
  '²',
  'a\u00a0b',
  'a\u0085b',
  'a\u2028b',
  'a\ufeffb',
  'a\tb',
  'a\u007fb',
  'a\uffffb',
  'a: ',
  'a ,b',
  'a,',
  'C#',
  'a #',
  'x\u00e9:',
);
// Near misses: other types, indicators, comments, spacing.
const otherPlain = fc.constantFrom(
  'true',
  'True',
  'FALSE',
  'null',
  'Null',
  '~',
  '1',
  '-1',
  '+1',
  '1.5',
  '.5',
  '1.',
  '1e3',
  '0x1F',
  '0o17',
  '.inf',
  '.nan',
  'yes',
  'a: b',
  'a:',
  'a #b',
  'a#b',
  '#a',
  ' a',
  'a ',
  '',
  '-',
  '- a',
  '? a',
  '&a',
  '*a',
  '!a',
  '|',
  '>',
  '%a',
  '@a',
  '`a`',
  'a, b',
  '[a]',
  '{a: b}',
);
const plain = fc.oneof({ weight: 12, arbitrary: goodPlain }, { weight: 1, arbitrary: otherPlain });
const quoted = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 20 }).map((text) => JSON.stringify(text)) },
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).map((text) => JSON.stringify(text)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '"a\\/b"',
      '"a\\x41"',
      '"a\\u0041"',
      '"a\\ b"',
      '"a\\\tb"',
      '"a" b',
      '"a',
      "'single'",
      "'it''s'",
      '"a"#c',
      '"a" #c',
      '""',
    ),
  },
);
const list = fc.array(plain, { maxLength: 4 }).map((items) => `[${items.join(', ')}]`);
const value = fc.oneof(
  { weight: 3, arbitrary: plain },
  { weight: 3, arbitrary: quoted },
  { weight: 2, arbitrary: list },
  { weight: 1, arbitrary: fc.constantFrom('[a,b]', '[ a, b ]', '[a, b, ]', '[a, [b]]', '[]', '[a, "b"]', '[a:b]', '[a] x') },
);
const key = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom(...FRONT_MATTER_FIELDS) },
  { weight: 1, arbitrary: fc.constantFrom('colour', 'Title', 'excerpt_separator', 'true', '__proto__') },
);
const line = fc.oneof(
  { weight: 30, arbitrary: fc.tuple(key, value).map(([k, v]) => `${k}: ${v}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', '# comment', '  indented: x', 'title:x', 'title:  x', 'title :x', 'tags:\n  - a', '- a', 'title: x # c'),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom('author', 'title', 'author', 'tags'),
        fc.array(fc.tuple(fc.constantFrom('name', 'url', 'name', 'email'), value), { maxLength: 3 }),
        fc.constantFrom('  ', '  ', '  ', '   ', ' ', '\t'),
      )
      .map(([field, entries, indent]) => [`${field}:`, ...entries.map(([k, v]) => `${indent}${k}: ${v}`)].join('\n')),
  },
);
const source = fc
  .tuple(
    fc.constantFrom('---\n', '---\n', '---\n', '---\n', '---\n', '---\n', '---\r\n', '\ufeff---\n', '----\n', '--- \n', '---yaml\n', ''),
    fc.array(line, { minLength: 0, maxLength: 6 }),
    fc.constantFrom('\n---\n', '\n---\n', '\n---\n', '\n---\n', '\n---\r\n', '\n----\n', '\n--- x\n', '\n---', '\n', '\n...\n'),
    fc.constantFrom('', '\n', '# Body\n\nText.\n', '\nBody', '---\nmore\n'),
  )
  .map(([open, lines, close, body]) => `${open}${lines.join('\n')}${close}${body}`);

describe('front matter fast path', () => {
  it('gives gray-matter’s data and body for every file it reads, and reads many', () => {
    let read = 0;
    fc.assert(
      fc.property(source, (text) => {
        if (expectSame(text)) read += 1;
      }),
      { numRuns: 20_000, seed: 20261122 },
    );
    expect(read).toBeGreaterThan(500);
  });

  it('declines what it cannot read exactly', () => {
    for (const text of [
      '---\ntitle: true\n---\n',
      '---\ntitle: 12\n---\n',
      '---\ntitle: x\ntitle: y\n---\n',
      '---\ncolour: red\n---\n',
      '---\n# c\ntitle: x\n---\n',
      '---\ntitle: x\n\n---\n',
      '---\r\ntitle: x\r\n---\r\n',
      '\ufeff---\ntitle: x\n---\n',
      "---\ntitle: 'x'\n---\n",
      '---\ntitle: "\\u0041"\n---\n',
      '---\ntags:\n  - a\n---\n',
      '---\ntitle: a: b\n---\n',
      '---\ntitle: x #c\n---\n',
      '---\ntags: [a, 1]\n---\n',
      '---\n---\n',
      'title: x\n',
    ])
      expect(simpleFrontMatter(text, FRONT_MATTER_FIELDS), text).toBeUndefined();
  });

  it('reads the shipped sample guides, a generated corpus and the test fixtures as gray-matter does', () => {
    const dir = makeTempDir('front-matter-corpus-');
    writeCorpus(dir, { size: 200 });
    const fixtures = path.resolve(import.meta.dirname, '..', 'fixtures');
    const folders = [SAMPLE_CONTENT_DIR, dir, path.join(fixtures, 'content-tiny'), path.join(fixtures, 'content-broken')];
    let read = 0;
    let files = 0;
    for (const folder of folders) {
      for (const name of readdirSync(path.join(folder, 'guides'))) {
        files += 1;
        if (expectSame(readFileSync(path.join(folder, 'guides', name), 'utf8'))) read += 1;
      }
    }
    // Every generated guide has the simple shape.
    expect(read).toBeGreaterThan(200);
    expect(files).toBeGreaterThan(read - 1);
  });
});

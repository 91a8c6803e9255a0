/**
 * The fast path for simple Markdown must give exactly the facts of the full CommonMark + GFM parse,
 * and must decline every document it cannot read exactly.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import matter from 'gray-matter';
import { describe, expect, it } from 'vitest';
import { writeCorpus } from '../../bench/corpus.js';
import { SAMPLE_CONTENT_DIR } from '../../src/config.js';
import { analyzeMarkdown, analyzeMarkdownWithParser } from '../../src/content/markdown.js';
import { simpleBlocks } from '../../src/content/markdown-simple.js';
import { makeTempDir } from '../helpers/build-test-app.js';

/** Lines a guide might hold, simple ones and near misses of every rule the fast path relies on. */
const word = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('food', 'Café', 'waste', 'log', 'the', 'a', '2', '1.5', 'x', 'naïve', 'end.', 'why?', 'it’s', 'a-b') },
  { weight: 2, arbitrary: fc.constantFrom('#tag', 'C#', '+5', '-3', '*', '**', '***', '*em*', '**strong**', '**two words**', '* ', ' *', '=', '==', '-', '--', '---', '!', ':', '#', '##', '1.', '2)', 'www.example.com', 'a@b.co', 'https://x.example/y', '  ') },
  { weight: 1, arbitrary: fc.constantFrom('_', '`', '[', ']', '<', '>', '&amp;', '\\', '|', '~', '~~', '\t') },
);
const text = fc.array(word, { minLength: 1, maxLength: 8 }).map((words) => words.join(' '));
const line = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 1, max: 7 }), text).map(([depth, t]) => `${'#'.repeat(depth)} ${t}`) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('- ', '* ', '+ ', '1. ', '2. ', '10) ', '-', '1.'), text).map(([marker, t]) => `${marker}${t}`) },
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(' ', '  ', '    ', '\t'), text).map(([indent, t]) => `${indent}${t}`) },
  { weight: 1, arbitrary: fc.constantFrom('---', '***', '===', '- - -', '  ', 'text  ', 'text\\', '#', '# ', '#hash', '# title #', '#\tx') },
);
const documents = fc.array(line, { minLength: 1, maxLength: 14 }).map((lines) => `${lines.join('\n')}\n`);

describe('simple Markdown fast path', () => {
  it('gives the full parser’s facts for every document it reads, and reads many', () => {
    let read = 0;
    fc.assert(fc.property(documents, (markdown) => {
      if (simpleBlocks(markdown) === undefined) return;
      read += 1;
      expect(analyzeMarkdown(markdown)).toEqual(analyzeMarkdownWithParser(markdown));
    }), { numRuns: 6000, seed: 20261122 });
    // The property means little unless the fast path takes a good share of the documents.
    expect(read).toBeGreaterThan(300);
  });

  it('declines what it cannot read exactly', () => {
    for (const markdown of [
      'Use `code`.', 'A [link](https://x.example).', 'Tom &amp; Jerry', 'a\\*b', '| a | b |\n|---|---|\n| 1 | 2 |', '> quote', '    code',
      'Title\n=====', 'Title\n---', '***', '- item\ncontinued lazily', 'para\n- list', '- # heading in item', '- - nested', 'hard  \nbreak',
      '<b>html</b>', '_under_', '~~gone~~', '# Title #', '# **bold** title', '#hashtag', '- ',
    ]) expect(simpleBlocks(`${markdown}\n`), markdown).toBeUndefined();
  });

  it('gives the same facts for the shipped sample guides and a generated corpus', () => {
    const dir = makeTempDir('markdown-corpus-');
    writeCorpus(dir, { size: 60 });
    const files = [
      ...readdirSync(path.join(SAMPLE_CONTENT_DIR, 'guides')).map((name) => path.join(SAMPLE_CONTENT_DIR, 'guides', name)),
      ...readdirSync(path.join(dir, 'guides')).map((name) => path.join(dir, 'guides', name)),
    ];
    let read = 0;
    for (const file of files) {
      const body = matter(readFileSync(file, 'utf8')).content.replace(/^\r?\n/, '');
      if (simpleBlocks(body) !== undefined) read += 1;
      expect(analyzeMarkdown(body), file).toEqual(analyzeMarkdownWithParser(body));
    }
    expect(read).toBeGreaterThanOrEqual(60);
  });
});

describe('word count', () => {
  it('counts the words of ASCII text as the word regex matches them, and of other text too', () => {
    const asciiText = fc.string({ unit: fc.constantFrom('a', 'Z', '7', "'", '-', ' ', '.', ',', '\n', '*', '_', '#'), maxLength: 60 });
    fc.assert(fc.property(fc.oneof(asciiText, fc.string({ maxLength: 40 })), (markdown) => {
      const facts = analyzeMarkdown(markdown);
      // eslint-disable-next-line no-control-regex -- the test is for anything outside ASCII
      const words = /[^\u0000-\u007f]/.test(facts.plainText) ? /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/gu : /[A-Za-z0-9][A-Za-z0-9'-]*/g;
      expect(facts.wordCount).toBe(facts.plainText.match(words)?.length ?? 0);
    }), { numRuns: 3000, seed: 20261122 });
  });
});

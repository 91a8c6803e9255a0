/**
 * A YAML error in a guide's front matter is reported at the line of the file the author has to
 * fix, whatever the file's line ends, byte order mark or opening `---` language tag.
 */
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContentFolder } from '../../src/content/load-content.js';
import { makeTempDir } from '../helpers/build-test-app.js';

const TINY = path.resolve(import.meta.dirname, '..', 'fixtures', 'content-tiny');

/** Front matter lines, the faulty one marked `<<`; the file is `---`, these, `---`, a body. */
const CASES: Record<string, string[]> = {
  'a line indented as if it continued the one above': [
    'title: Broken',
    'summary: One line.',
    '  language: en <<',
    'publishedAt: 2026-01-01',
  ],
  'an author field indented deeper than its sibling': [
    'title: Broken',
    'summary: One line.',
    'author:',
    '  name: Ada',
    '    url: https://example.com <<',
  ],
  'a colon inside a plain value': ['title: Broken', 'summary: Tip: keep it cold <<', 'publishedAt: 2026-01-01'],
  'a key repeated': ['title: Broken', 'summary: One line.', 'title: Again <<'],
  'a tab as indentation': ['title: Broken', 'summary: One line.', '\tlanguage: en <<'],
  'no space after a colon': ['title: Broken', 'summary: One line.', 'language:en <<', 'publishedAt: 2026-01-01'],
};

interface Variant {
  name: string;
  open: string;
  eol: string;
  bom: string;
}
const VARIANTS: Variant[] = [
  { name: 'LF', open: '---', eol: '\n', bom: '' },
  { name: 'CRLF with a byte order mark', open: '---', eol: '\r\n', bom: '\ufeff' },
  { name: '---yaml', open: '---yaml', eol: '\n', bom: '' },
];

describe("YAML errors in front matter are reported at the file's line", () => {
  let content: string;
  let reported: Map<string, string>;
  const expected = new Map<string, number>();
  beforeAll(async () => {
    const dir = makeTempDir('guides-yaml-lines-');
    content = path.join(dir, 'content');
    cpSync(TINY, content, { recursive: true });
    let n = 0;
    for (const variant of VARIANTS) {
      for (const lines of Object.values(CASES)) {
        const file = `broken-${n++}.md`;
        const all = [variant.open, ...lines.map((line) => line.replace(' <<', '')), '---', '# Broken', '', 'Text.', ''];
        // The opening --- is file line 1, so front matter line i (from 0) is file line i + 2.
        expected.set(`guides/${file}`, lines.findIndex((line) => line.endsWith(' <<')) + 2);
        writeFileSync(path.join(content, 'guides', file), variant.bom + all.join(variant.eol));
      }
    }
    const loaded = await loadContentFolder(content);
    expect(loaded.content).toBeUndefined();
    reported = new Map(loaded.problems.map((problem) => [problem.file, problem.message]));
  });
  afterAll(() => rmSync(path.dirname(content), { recursive: true, force: true }));

  let n = 0;
  for (const variant of VARIANTS) {
    for (const name of Object.keys(CASES)) {
      const file = `guides/broken-${n++}.md`;
      it(`${name} (${variant.name})`, () => {
        const message = reported.get(file);
        expect(message, file).toMatch(/^is not valid YAML: .+ at line \d+, column \d+:?$/);
        expect(Number(/ at line (\d+),/.exec(message!)![1]), message).toBe(expected.get(file));
      });
    }
  }
});

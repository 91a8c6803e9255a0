/**
 * The fields derived from a guide's Markdown (src/content/markdown.ts): the text a reader sees,
 * one block a line, from the full CommonMark + GFM parse; its word count; the headings and their
 * GitHub-style ids.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import matter from 'gray-matter';
import { describe, expect, it } from 'vitest';
import { writeCorpus } from '../../bench/corpus.js';
import { SAMPLE_CONTENT_DIR } from '../../src/config.js';
import { analyzeMarkdown } from '../../src/content/markdown.js';
import { makeTempDir } from '../helpers/build-test-app.js';

const textOf = (markdown: string): string => analyzeMarkdown(markdown).plainText;

describe('the text of a guide', () => {
  it('reads GFM tables, one cell a line, alignment and escaped pipes included', () => {
    expect(textOf('Costs:\n\n| Item | Cost |\n|:---|---:|\n| Beans \\| milk | $0.40 |\n| Total | |\n')).toBe(
      'Costs:\nItem\nCost\nBeans | milk\n$0.40\nTotal',
    );
  });

  it('keeps the text of links, autolinks and images, never their addresses', () => {
    expect(
      textOf(
        'See [the *log*](https://x.example/log "Log") and <https://x.example/a>, ![a chart](c.png) or [ref][1].\n\n[1]: https://x.example/r\n',
      ),
    ).toBe('See the log and https://x.example/a, a chart or ref.');
  });

  it('keeps code spans and fenced or indented code as text, without the fences', () => {
    expect(textOf('Use `FIFO` always.\n\n```yaml\nshelf: cold\n  order: first\n```\n\n    indented code\n')).toBe(
      'Use FIFO always.\nshelf: cold order: first\nindented code',
    );
  });

  it('reads `_` and `*` emphasis, but not underscores inside words', () => {
    expect(textOf('A _quick_ and __bold__ *check* of temp_log and snake_case_name.\n')).toBe(
      'A quick and bold check of temp_log and snake_case_name.',
    );
  });

  it('decodes entities and keeps a bare `&`', () => {
    expect(textOf('Salt &amp; pepper & oil, R&D, 5&nbsp;g, &#8211; &copy; &notanentity;\n')).toBe(
      'Salt & pepper & oil, R&D, 5 g, – © &notanentity;',
    );
  });

  it('takes a task list check as list syntax only where GFM does', () => {
    expect(textOf('- [ ] to do\n- [x]\n  done\n- [ ]\n- [X]done\n- text [ ] box\n\n[ ] not in a list\n')).toBe(
      'to do\ndone\n[ ]\n[X]done\ntext [ ] box\n[ ] not in a list',
    );
  });

  it('reads nested lists, task lists and block quotes one block a line', () => {
    expect(textOf('- one\n  - nested *two*\n    1. deeper\n- [ ] to do\n- [x] done\n\n> quoted\n> text\n>\n> — Name\n')).toBe(
      'one\nnested two\ndeeper\nto do\ndone\nquoted text\n— Name',
    );
  });

  it('drops raw HTML and strikethrough marks, joins a hard break and keeps footnote text where it is written', () => {
    expect(
      textOf(
        'Hello <b>bold</b> world<br>\n<!-- note -->\n\n<div>\nblock\n</div>\n\n~~old~~ new  \nline\\\nend[^1].\n\n[^1]: The note.\n\nAfter.\n',
      ),
    ).toBe('Hello bold world\nold newlineend.\nThe note.\nAfter.');
  });

  it('removes every `*`, so that snippets can mark hits with `**`', () => {
    expect(textOf('A \\* star, 2 * 3 and **bold**.\n')).toBe('A  star, 2  3 and bold.');
  });
});

describe('headings', () => {
  it('have GitHub-style ids, numbered when their text repeats, from ATX and setext headings alike', () => {
    const facts = analyzeMarkdown(
      '# Café & *bar* `code`\n\n## Checklist\n\nChecklist\n---------\n\n### [Checklist](https://x.example) #\n\n> ## In a quote\n\n- ## In a list\n',
    );
    expect(facts.headings).toEqual([
      { depth: 1, text: 'Café & bar code', id: 'café--bar-code' },
      { depth: 2, text: 'Checklist', id: 'checklist' },
      { depth: 2, text: 'Checklist', id: 'checklist-1' },
      { depth: 3, text: 'Checklist', id: 'checklist-2' },
      { depth: 2, text: 'In a quote', id: 'in-a-quote' },
      { depth: 2, text: 'In a list', id: 'in-a-list' },
    ]);
  });

  it('are not read inside code', () => {
    expect(analyzeMarkdown('```\n# not a heading\n```\n\n    # nor this\n').headings).toEqual([]);
  });
});

describe('the sample guides and the benchmark corpus', () => {
  it('leave no Markdown syntax in the text, and every heading outside code is found', () => {
    const dir = makeTempDir('markdown-corpus-');
    writeCorpus(dir, { size: 60 });
    const files = [SAMPLE_CONTENT_DIR, dir].flatMap((folder) =>
      readdirSync(path.join(folder, 'guides')).map((name) => path.join(folder, 'guides', name)),
    );
    for (const file of files) {
      const body = matter(readFileSync(file, 'utf8')).content;
      const facts = analyzeMarkdown(body);
      // Code is text as written: what is left outside it shows what the parser read as syntax.
      const prose = body.replace(/^(```|~~~)[^]*?^\1$/gm, '').replace(/`[^`\n]*`/g, '');
      const atxHeadings = prose.split('\n').filter((line) => /^#{1,6} /.test(line));
      expect(
        facts.headings.map((h) => h.depth),
        file,
      ).toEqual(atxHeadings.map((line) => line.indexOf(' ')));
      expect(facts.plainText, file).not.toMatch(/\]\(|&amp;|&#\d+;|\|\s*---|^#+ |\*|~~|<br>|<!--/m);
      expect(facts.wordCount, file).toBeGreaterThan(facts.headings.length);
    }
  });
});

describe('word count', () => {
  it('counts the words of ASCII text as the word regex matches them, and of other text too', () => {
    const asciiText = fc.string({ unit: fc.constantFrom('a', 'Z', '7', "'", '-', ' ', '.', ',', '\n', '*', '_', '#'), maxLength: 60 });
    const otherText = fc.string({
      unit: fc.constantFrom('a', ' ', '-', "'", '’', 'é', 'e\u0301', '\u0301', '–', '°', '日', '𝐀', '\ud835', '٣', '\n'),
      maxLength: 40,
    });
    fc.assert(
      fc.property(fc.oneof(asciiText, otherText, fc.string({ unit: 'binary', maxLength: 40 })), (markdown) => {
        const facts = analyzeMarkdown(markdown);
        // eslint-disable-next-line no-control-regex -- the test is for anything outside ASCII
        const words = /[^\u0000-\u007f]/.test(facts.plainText) ? /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/gu : /[A-Za-z0-9][A-Za-z0-9'-]*/g;
        expect(facts.wordCount).toBe(facts.plainText.match(words)?.length ?? 0);
      }),
      { numRuns: 3000, seed: 20261122 },
    );
  });

  it('counts the words a reader sees, and gives a reading time at 230 words a minute', () => {
    const facts = analyzeMarkdown(
      '# Title here\n\n- **one** two\n- [three](https://x.example/long/url)\n\n| a | b |\n|---|---|\n| four | five |\n',
    );
    expect(facts.wordCount).toBe(9);
    expect(facts.readingTimeMinutes).toBe(1);
    expect(analyzeMarkdown('word '.repeat(2301)).readingTimeMinutes).toBe(11);
  });
});

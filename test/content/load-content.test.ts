import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadContentFolder } from '../../src/content/load-content.js';
import { analyzeMarkdown } from '../../src/content/markdown.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures');

describe('loadContentFolder', () => {
  it('reports every problem of every file, with file and field, and returns no content', async () => {
    const loaded = await loadContentFolder(path.join(FIXTURES, 'content-broken'));
    expect(loaded.content).toBeUndefined();
    const found = loaded.problems.map((p) => `${p.file} ${p.field ?? '-'}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'product.yaml description',
        'resources.yaml links[0].href',
        'guides/no-front-matter.md front matter',
        'guides/bad-fields.md colour',
        'guides/bad-fields.md status',
        'guides/bad-fields.md title',
        'guides/bad-fields.md publishedAt',
        'guides/bad-fields.md updatedAt',
        'guides/bad-fields.md tags',
        'guides/bad-fields.md language',
        'guides/bad-fields.md canonicalUrl',
        'guides/Bad_Name.md file name',
        'guides/broken-yaml.md front matter',
        'guides/duplicate-b.md slug',
        'guides/missing-published-at.md publishedAt',
        'guides/updated-before-published.md updatedAt',
        'guides/empty-body.md body',
        'guides/control-characters.md body',
      ]),
    );
    expect(loaded.problems).toHaveLength(18);
    expect(loaded.problems.find((p) => p.field === 'colour')!.message).toBe(
      'unknown field; accepted fields: title, summary, status, publishedAt, updatedAt, tags, language, author, canonicalUrl, slug',
    );
  });

  it('normalizes dates to RFC 3339 UTC, defaults status and language, and derives fields', async () => {
    const loaded = await loadContentFolder(path.join(FIXTURES, 'content-tiny'));
    expect(loaded.problems).toEqual([]);
    const [first, second] = loaded.content!.guides;
    expect(first).toMatchObject({
      slug: 'first-guide',
      status: 'published',
      language: 'en',
      publishedAt: '2026-01-01T09:00:00Z',
      updatedAt: '2026-01-01T09:00:00Z',
    });
    expect(second).toMatchObject({
      slug: 'second-guide',
      language: 'fr-CA',
      publishedAt: '2026-01-02T00:00:00Z',
      author: { name: 'Ana' },
      canonicalUrl: 'https://guides.example.com/second-guide',
    });
    expect(loaded.content!.resources).toEqual([]);
    expect(loaded.content!.product).toEqual({ name: 'Tiny Guides', description: 'Two guides for CLI tests.' });
  });
});

describe('analyzeMarkdown', () => {
  it('gives GitHub-style heading ids, unique within the guide', () => {
    const facts = analyzeMarkdown('# Reduce food waste\n\n## Measure first\n\n## Measure first\n\n### Café & *bar* `code`\n');
    expect(facts.headings).toEqual([
      { depth: 1, text: 'Reduce food waste', id: 'reduce-food-waste' },
      { depth: 2, text: 'Measure first', id: 'measure-first' },
      { depth: 2, text: 'Measure first', id: 'measure-first-1' },
      { depth: 3, text: 'Café & bar code', id: 'café--bar-code' },
    ]);
  });

  it('counts words of the text, not of the Markdown syntax, and estimates reading time', () => {
    const facts = analyzeMarkdown(
      '# Title here\n\n- **one** two\n- [three](https://x.example/long/url)\n\n| a | b |\n|---|---|\n| four | five |\n',
    );
    expect(facts.wordCount).toBe(9);
    expect(facts.plainText).not.toContain('*');
    expect(facts.plainText).not.toContain('https://');
    expect(facts.readingTimeMinutes).toBe(1);
    const long = analyzeMarkdown(`${'word '.repeat(2300)}`);
    expect(long.wordCount).toBe(2300);
    expect(long.readingTimeMinutes).toBe(10);
  });

  it('drops raw HTML from the searchable text', () => {
    expect(analyzeMarkdown('Hello <script>alert(1)</script> world\n\n<div>block</div>\n').plainText).not.toMatch(/script|div/);
  });
});

/** Fixed-timestamp guide and content factories for tests. */
import { analyzeMarkdown } from '../../src/content/markdown.js';
import type { ContentSet, GuideRecord } from '../../src/guides/guide.js';

let counter = 0;

export function makeGuide(overrides: Partial<GuideRecord> & { slug: string }): GuideRecord {
  counter += 1;
  const markdown = overrides.markdown ?? `# ${overrides.title ?? overrides.slug}\n\nBody text number ${counter} about kitchens.\n`;
  const publishedAt = overrides.publishedAt === undefined ? '2026-01-01T09:00:00Z' : overrides.publishedAt;
  return {
    status: 'published',
    title: `Guide ${overrides.slug}`,
    summary: `Summary of ${overrides.slug}.`,
    tags: [],
    language: 'en',
    updatedAt: publishedAt,
    ...analyzeMarkdown(markdown),
    ...overrides,
    publishedAt,
    markdown,
  };
}

export function makeContent(guides: GuideRecord[], overrides: Partial<ContentSet> = {}): ContentSet {
  return {
    product: { name: 'Test Guides', description: 'Guides for tests.', homepage: 'https://guides.example.com' },
    resources: [],
    guides,
    ...overrides,
  };
}

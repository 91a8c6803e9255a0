/** What an import writes for a guide: its row in the guides table. */
import type { GuideRecord } from '../../guides/guide.js';

export function guideRow(guide: GuideRecord, contentHash: string): Record<string, unknown> {
  return {
    slug: guide.slug,
    status: guide.status,
    title: guide.title,
    summary: guide.summary,
    tags: JSON.stringify(guide.tags),
    language: guide.language,
    published_at: guide.publishedAt,
    published_ms: guide.publishedAt === null ? null : Date.parse(guide.publishedAt),
    updated_at: guide.updatedAt,
    author: guide.author ? JSON.stringify(guide.author) : null,
    canonical_url: guide.canonicalUrl ?? null,
    markdown: guide.markdown,
    word_count: guide.wordCount,
    reading_time_minutes: guide.readingTimeMinutes,
    headings: JSON.stringify(guide.headings),
    content_hash: contentHash,
  };
}

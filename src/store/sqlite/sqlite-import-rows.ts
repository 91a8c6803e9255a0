/** What an import writes for a guide: its row, and the search index rebuilt from the published ones. */
import type Database from 'better-sqlite3';
import type { GuideRecord } from '../../guides/guide.js';
import { SearchAnalyzer } from './search/sqlite-analyzer.js';
import type { SearchDoc } from './search/sqlite-index-format.js';
import { SearchIndexBuilder } from './search/sqlite-index-builder.js';

/**
 * Rebuilds the search index from the folder's published guides (search documents prepared while
 * reading, or guides analyzed now), in list order: publishedAt desc, slug in byte order.
 */
export function writeSearchIndex(
  db: Database.Database,
  published: ReadonlyMap<string, GuideRecord | SearchDoc>,
  ids: readonly { id: number; slug: string }[],
): void {
  const idOf = new Map(ids.map((row) => [row.slug, row.id]));
  const entries = [...published].map(([slug, item]) => ({
    slug,
    item,
    publishedMs: 'terms' in item ? item.publishedMs : Date.parse(item.publishedAt as string),
  }));
  entries.sort((a, b) => b.publishedMs - a.publishedMs || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  const builder = new SearchIndexBuilder(db);
  let analyzer: SearchAnalyzer | undefined;
  for (const { slug, item } of entries) {
    const doc = 'terms' in item ? item : (analyzer ??= new SearchAnalyzer()).searchDoc(item);
    builder.add({ ...doc, guideId: idOf.get(slug) as number });
  }
  builder.finish();
}

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

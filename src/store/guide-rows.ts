/**
 * Database rows (snake_case, JSON columns already decoded) → the store's published guide shapes.
 * Both backends select the same columns; SQLite decodes its JSON text columns first, PostgreSQL's
 * jsonb arrives decoded.
 */
import type { Author, GuideDetailData, GuideSummaryData, Heading } from '../guides/guide.js';

export interface GuideSummaryRow {
  slug: string;
  title: string;
  summary: string;
  tags: string[];
  language: string;
  published_at: string;
  updated_at: string | null;
  reading_time_minutes: number;
}

export interface GuideDetailRow extends GuideSummaryRow {
  markdown: string;
  word_count: number;
  headings: Heading[];
  author: Author | null;
  canonical_url: string | null;
}

export function toGuideSummary(row: GuideSummaryRow): GuideSummaryData {
  return {
    slug: row.slug,
    title: row.title,
    summary: row.summary,
    tags: row.tags,
    language: row.language,
    publishedAt: row.published_at,
    updatedAt: row.updated_at ?? row.published_at,
    readingTimeMinutes: row.reading_time_minutes,
  };
}

export function toGuideDetail(row: GuideDetailRow): GuideDetailData {
  return {
    ...toGuideSummary(row),
    markdown: row.markdown,
    wordCount: row.word_count,
    headings: row.headings,
    ...(row.author ? { author: row.author } : {}),
    ...(row.canonical_url ? { canonicalUrl: row.canonical_url } : {}),
  };
}

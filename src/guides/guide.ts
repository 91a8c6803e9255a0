/** Guide states and the shapes shared by the store, the importer and the HTTP layer. */

export const GUIDE_STATUSES = ['published', 'retained', 'archived'] as const;
export type GuideStatus = (typeof GUIDE_STATUSES)[number];

export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';
export const SLUG_MAX_LENGTH = 100;
const slugRegExp = new RegExp(SLUG_PATTERN);

export function isValidSlug(value: string): boolean {
  return value.length <= SLUG_MAX_LENGTH && slugRegExp.test(value);
}

export interface Heading {
  depth: number;
  text: string;
  id: string;
}

export interface Author {
  name: string;
  url?: string;
}

/** A guide as authored and derived at import: everything the store keeps. */
export interface GuideRecord {
  slug: string;
  status: GuideStatus;
  title: string;
  summary: string;
  tags: string[];
  language: string;
  /** RFC 3339 UTC; required for published guides. */
  publishedAt: string | null;
  updatedAt: string | null;
  author?: Author;
  canonicalUrl?: string;
  markdown: string;
  /** The body as plain text (Markdown syntax removed), used for search and snippets. */
  plainText: string;
  wordCount: number;
  readingTimeMinutes: number;
  headings: Heading[];
}

/** The published fields of a guide as lists show them; `url` is added by the HTTP layer. */
export interface GuideSummaryData {
  slug: string;
  title: string;
  summary: string;
  tags: string[];
  language: string;
  publishedAt: string;
  updatedAt: string;
  readingTimeMinutes: number;
  snippet?: string;
}

export interface GuideDetailData extends GuideSummaryData {
  markdown: string;
  wordCount: number;
  headings: Heading[];
  author?: Author;
  canonicalUrl?: string;
}

export interface ProductInfo {
  name: string;
  description: string;
  homepage?: string;
  contact?: { name?: string; url?: string; email?: string };
  license?: { name: string; url?: string };
}

export interface ResourceLink {
  rel: string;
  href: string;
  title: string;
  type?: string;
}

/** Everything one import brings: the whole content folder, validated. */
export interface ContentSet {
  product: ProductInfo;
  resources: ResourceLink[];
  guides: GuideRecord[];
}

/** Formats epoch milliseconds as an RFC 3339 UTC timestamp, with milliseconds only when present. */
export function formatTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

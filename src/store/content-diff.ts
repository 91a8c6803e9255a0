/** Backend-independent import planning: what an import creates, updates, moves and archives. */
import { createHash } from 'node:crypto';
import type { GuideRecord, GuideStatus } from '../guides/guide.js';
import type { ImportSummary } from './guide-store.js';

export interface ExistingGuide {
  slug: string;
  status: GuideStatus;
  contentHash: string;
}

export interface ImportPlan {
  upserts: { guide: GuideRecord; contentHash: string; isNew: boolean }[];
  archive: string[];
  summary: Omit<ImportSummary, 'productChanged' | 'resourcesChanged' | 'contentVersion'>;
}

export function hashJson(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url');
}

export function planImport(guides: readonly GuideRecord[], existing: readonly ExistingGuide[]): ImportPlan {
  const bySlug = new Map(existing.map((row) => [row.slug, row]));
  const plan: ImportPlan = { upserts: [], archive: [], summary: { created: [], updated: [], unchanged: 0, moved: [] } };
  const seen = new Set<string>();
  for (const guide of guides) {
    seen.add(guide.slug);
    const contentHash = hashJson(guide);
    const before = bySlug.get(guide.slug);
    if (!before) {
      plan.upserts.push({ guide, contentHash, isNew: true });
      plan.summary.created.push(guide.slug);
    } else if (before.contentHash !== contentHash) {
      plan.upserts.push({ guide, contentHash, isNew: false });
      plan.summary.updated.push(guide.slug);
      if (before.status !== guide.status) plan.summary.moved.push({ slug: guide.slug, from: before.status, to: guide.status });
    } else {
      plan.summary.unchanged += 1;
    }
  }
  for (const row of existing) {
    if (!seen.has(row.slug) && row.status !== 'archived') {
      plan.archive.push(row.slug);
      plan.summary.moved.push({ slug: row.slug, from: row.status, to: 'archived' });
    }
  }
  return plan;
}

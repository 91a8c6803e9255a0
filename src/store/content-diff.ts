/** Backend-independent import planning: what an import creates, updates, moves and archives. */
import { createHash } from 'node:crypto';
import type { GuideRecord, GuideStatus } from '../guides/guide.js';
import type { ImportSummary } from './guide-store.js';

export interface ExistingGuide {
  slug: string;
  status: GuideStatus;
  contentHash: string;
}

export type PlanSummary = Omit<ImportSummary, 'productChanged' | 'resourcesChanged' | 'contentVersion'>;

export interface ImportPlan {
  upserts: { guide: GuideRecord; contentHash: string; isNew: boolean }[];
  archive: string[];
  summary: PlanSummary;
}

/** The hash an import compares to decide whether a guide changed (kept in each guide's row). */
export function hashJson(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url');
}

/**
 * Plans an import one guide at a time, in folder order, so that a store can write each guide as
 * it arrives instead of holding the whole folder: `add` says whether a guide must be written,
 * `finish` (after the last guide) which guides left the folder and are archived.
 */
export class ImportPlanner {
  readonly summary: PlanSummary = { created: [], updated: [], unchanged: 0, moved: [] };
  private readonly existing: readonly ExistingGuide[];
  private readonly bySlug: Map<string, ExistingGuide>;
  private readonly seen = new Set<string>();

  constructor(existing: readonly ExistingGuide[]) {
    this.existing = existing;
    this.bySlug = new Map(existing.map((row) => [row.slug, row]));
  }

  /** Whether the guide must be written (new or changed); `isNew` when it is created. */
  add(guide: GuideRecord, contentHash: string): { write: boolean; isNew: boolean } {
    this.seen.add(guide.slug);
    const before = this.bySlug.get(guide.slug);
    if (!before) {
      this.summary.created.push(guide.slug);
      return { write: true, isNew: true };
    }
    if (before.contentHash !== contentHash) {
      this.summary.updated.push(guide.slug);
      if (before.status !== guide.status) this.summary.moved.push({ slug: guide.slug, from: before.status, to: guide.status });
      return { write: true, isNew: false };
    }
    this.summary.unchanged += 1;
    return { write: false, isNew: false };
  }

  /** The slugs to archive: guides not in the folder that are not archived yet. Call once, after the last `add`. */
  finish(): string[] {
    const archive: string[] = [];
    for (const row of this.existing) {
      if (!this.seen.has(row.slug) && row.status !== 'archived') {
        archive.push(row.slug);
        this.summary.moved.push({ slug: row.slug, from: row.status, to: 'archived' });
      }
    }
    return archive;
  }
}

export function planImport(guides: readonly GuideRecord[], existing: readonly ExistingGuide[]): ImportPlan {
  const planner = new ImportPlanner(existing);
  const upserts: ImportPlan['upserts'] = [];
  for (const guide of guides) {
    const contentHash = hashJson(guide);
    const { write, isNew } = planner.add(guide, contentHash);
    if (write) upserts.push({ guide, contentHash, isNew });
  }
  const archive = planner.finish();
  return { upserts, archive, summary: planner.summary };
}

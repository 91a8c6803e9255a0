/**
 * Import planning, the same for every backend: what an import creates, updates, moves and
 * archives. A backend feeds the planner the folder's guides and writes what it says to write.
 */
import { createHash } from 'node:crypto';
import type { GuideRecord, GuideStatus } from '../guides/guide.js';
import type { ImportSummary } from './guide-store.js';

export interface ExistingGuide {
  slug: string;
  status: GuideStatus;
  contentHash: string;
}

export type PlanSummary = Omit<ImportSummary, 'productChanged' | 'resourcesChanged' | 'contentVersion'>;

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

  /** Whether the guide must be written (new or changed); `isNew` when it is created. Throws on a slug already added. */
  add(guide: GuideRecord, contentHash: string): { write: boolean; isNew: boolean } {
    // The folder reader reports a slug used twice as a problem; a caller that still gives one gets
    // the import refused rather than one copy chosen, so both backends answer the same.
    if (this.seen.has(guide.slug)) throw new Error(`guide ${guide.slug} is given twice: an import takes each slug once`);
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

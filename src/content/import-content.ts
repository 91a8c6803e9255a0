/** Validate a content folder fully, then apply it to a store in one transaction. */
import { ImportPlanner } from '../store/import-plan.js';
import type { GuideStore, ImportSummary } from '../store/guide-store.js';
import { ContentRejectedError, loadContentFolder, openContentFolder } from './load-content.js';
import type { LoadOptions } from './load-content.js';
import type { ContentProblem } from './problems.js';

export interface ImportResult {
  /** Present when the import was applied. */
  summary?: ImportSummary;
  problems: ContentProblem[];
  guideFileCount: number;
}

export async function importContentFolder(store: GuideStore, dir: string, options: LoadOptions = {}): Promise<ImportResult> {
  if (store.importStream) {
    // Guides are written as they are read, in one transaction that a problem anywhere rolls back.
    const folder = await openContentFolder(dir, { ...options, preparation: store.guidePreparation });
    const { product, resources, guideFileCount } = folder;
    try {
      if (product && folder.problems.length === 0) {
        const summary = await store.importStream({ product, resources, guides: folder.guides() });
        return { summary, problems: [], guideFileCount };
      }
      for await (const guide of folder.guides()) void guide;
    } catch (error) {
      if (!(error instanceof ContentRejectedError)) throw error;
    }
    return { problems: folder.problems, guideFileCount };
  }
  const loaded = await loadContentFolder(dir, options);
  if (!loaded.content) return { problems: loaded.problems, guideFileCount: loaded.guideFileCount };
  const summary = await store.importContent(loaded.content);
  return { summary, problems: [], guideFileCount: loaded.guideFileCount };
}

/**
 * What importing the folder would do, without writing: validates it as an import does, plans it
 * against the guides in the store, and reports the content version the import would give.
 */
export async function planContentFolder(store: GuideStore, dir: string, options: LoadOptions = {}): Promise<ImportResult> {
  const folder = await openContentFolder(dir, options);
  const planner = new ImportPlanner(await store.existingGuides());
  let writes = 0;
  try {
    for await (const { guide, contentHash } of folder.guides()) if (planner.add(guide, contentHash).write) writes += 1;
  } catch (error) {
    if (!(error instanceof ContentRejectedError)) throw error;
  }
  const { product, resources, problems, guideFileCount } = folder;
  if (!product || problems.length > 0) return { problems, guideFileCount };
  const archived = planner.finish().length;
  const stored = await store.getProduct();
  const productChanged = stored === undefined || JSON.stringify(stored) !== JSON.stringify(product);
  const resourcesChanged = stored === undefined || JSON.stringify(await store.getResources()) !== JSON.stringify(resources);
  const version = await store.contentVersion();
  const changes = writes + archived > 0 || productChanged || resourcesChanged;
  return {
    summary: { ...planner.summary, productChanged, resourcesChanged, contentVersion: changes ? version + 1 : version },
    problems: [],
    guideFileCount,
  };
}

export function formatImportSummary(summary: ImportSummary, guideFileCount: number, { dryRun = false } = {}): string {
  const counts =
    `${summary.created.length} created, ${summary.updated.length} updated, ` +
    `${summary.unchanged} unchanged, ${summary.moved.length} moved between states.`;
  const lines = [
    dryRun
      ? `Dry run, nothing written: importing ${guideFileCount} guide file(s) would give ${counts}`
      : `Imported ${guideFileCount} guide file(s): ${counts}`,
  ];
  if (summary.created.length > 0) lines.push(`  created: ${summary.created.join(', ')}`);
  if (summary.updated.length > 0) lines.push(`  updated: ${summary.updated.join(', ')}`);
  for (const move of summary.moved) lines.push(`  moved: ${move.slug} (${move.from} → ${move.to})`);
  if (summary.productChanged) lines.push('  product.yaml changed');
  if (summary.resourcesChanged) lines.push('  resources.yaml changed');
  lines.push(dryRun ? `Content version after the import: ${summary.contentVersion}.` : `Content version: ${summary.contentVersion}.`);
  return lines.join('\n');
}

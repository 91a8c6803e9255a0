/** Validate a content folder fully, then apply it to a store in one transaction. */
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
    const folder = await openContentFolder(dir, { ...options, prepareSearch: store.dialect === 'sqlite' });
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

export function formatImportSummary(summary: ImportSummary, guideFileCount: number): string {
  const lines = [
    `Imported ${guideFileCount} guide file(s): ${summary.created.length} created, ${summary.updated.length} updated, `
      + `${summary.unchanged} unchanged, ${summary.moved.length} moved between states.`,
  ];
  if (summary.created.length > 0) lines.push(`  created: ${summary.created.join(', ')}`);
  if (summary.updated.length > 0) lines.push(`  updated: ${summary.updated.join(', ')}`);
  for (const move of summary.moved) lines.push(`  moved: ${move.slug} (${move.from} → ${move.to})`);
  if (summary.productChanged) lines.push('  product.yaml changed');
  if (summary.resourcesChanged) lines.push('  resources.yaml changed');
  lines.push(`Content version: ${summary.contentVersion}.`);
  return lines.join('\n');
}

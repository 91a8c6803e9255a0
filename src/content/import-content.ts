/** Validate a content folder fully, then apply it to a store in one transaction. */
import type { GuideStore, ImportSummary } from '../store/guide-store.js';
import { loadContentFolder } from './load-content.js';
import type { LoadOptions } from './load-content.js';
import type { ContentProblem } from './problems.js';

export interface ImportResult {
  /** Present when the import was applied. */
  summary?: ImportSummary;
  problems: ContentProblem[];
  guideFileCount: number;
}

export async function importContentFolder(store: GuideStore, dir: string, options: LoadOptions = {}): Promise<ImportResult> {
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

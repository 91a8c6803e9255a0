/**
 * SQLite's GuidePreparer: the search analyzer runs on the threads that read a content folder, so
 * that building the index after an import only maps tokens instead of reading every word again.
 */
import type { GuideRecord } from '../../guides/guide.js';
import type { GuidePreparation, GuidePreparer } from '../prepare-guide.js';
import { SearchAnalyzer } from './search/sqlite-analyzer.js';
import type { SearchDoc, SearchDocData } from './search/sqlite-index-format.js';

export function createGuidePreparer(): GuidePreparer {
  const analyzer = new SearchAnalyzer();
  let sent = 0;
  return {
    // Drafts and retained guides are never indexed.
    prepare: (guide: GuideRecord) => (guide.status === 'published' ? analyzer.searchDocData(guide) : undefined),
    takeNewEntries: () => {
      const entries = analyzer.vocabulary.slice(sent);
      sent = analyzer.vocabulary.length;
      return entries;
    },
    // Each search document's arrays share one buffer.
    transferables: (prepared) => [(prepared as SearchDocData).terms.terms.buffer as ArrayBuffer],
    complete: (prepared, dictionary): SearchDoc => ({ ...(prepared as SearchDocData), vocabulary: dictionary }),
  };
}

/** What the SQLite store hands to content/: the module path is for the reading worker threads. */
export const SQLITE_GUIDE_PREPARATION: GuidePreparation = {
  // Run from TypeScript sources, a worker imports the .ts file (start-worker.ts registers tsx).
  moduleUrl: new URL(`./sqlite-guide-preparer.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url).href,
  create: createGuidePreparer,
};

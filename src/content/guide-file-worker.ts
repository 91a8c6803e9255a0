/**
 * A worker thread of guide-files.ts: validates and prepares batches of guide files. Its
 * search analyzer keeps one vocabulary for all its batches; each reply carries the tokens first met
 * in it, so the main thread knows what every token id of this worker means.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SearchAnalyzer } from '../store/sqlite/search/sqlite-analyzer.js';
import { prepareGuideFile } from './guide-files.js';
import type { GuideWorkerData, GuideWorkerReply, GuideWorkerRequest } from './guide-files.js';

const { prepareSearch } = workerData as GuideWorkerData;
const analyzer = prepareSearch ? new SearchAnalyzer() : undefined;
let termsSent = 0;

parentPort?.on('message', (request: GuideWorkerRequest) => {
  const results = request.files.map(({ name, ...read }) => prepareGuideFile(name, read, analyzer));
  const newTerms = analyzer ? analyzer.vocabulary.slice(termsSent) : [];
  termsSent += newTerms.length;
  // Each search document's arrays share one buffer: hand it over instead of copying it.
  const transfer = results.flatMap((result) => (result.search ? [result.search.terms.terms.buffer as ArrayBuffer] : []));
  parentPort?.postMessage({ batch: request.batch, results, newTerms } satisfies GuideWorkerReply, transfer);
});

/**
 * A worker thread of guide-files.ts: validates and prepares batches of guide files. It loads the
 * store's preparer by the module URL in its workerData, so content/ depends on no backend. The
 * preparer keeps one dictionary for all batches; each reply carries the entries first made in it,
 * so the main thread knows what every entry number of this worker means.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { GuidePreparer, GuidePreparerModule } from '../store/prepare-guide.js';
import { prepareGuideFile } from './guide-files.js';
import type { GuideWorkerData, GuideWorkerReply, GuideWorkerRequest } from './guide-files.js';

const { preparerModuleUrl } = workerData as GuideWorkerData;

async function loadPreparer(moduleUrl: string | undefined): Promise<GuidePreparer | undefined> {
  if (moduleUrl === undefined) return undefined;
  return ((await import(moduleUrl)) as GuidePreparerModule).createGuidePreparer();
}

function answerBatches(preparer: GuidePreparer | undefined): void {
  parentPort?.on('message', (request: GuideWorkerRequest) => {
    const results = request.files.map(({ name, ...read }) => prepareGuideFile(name, read, preparer));
    const newEntries = preparer ? preparer.takeNewEntries() : [];
    // Hand buffers over instead of copying them.
    const transfer = preparer
      ? results.flatMap((result) => (result.prepared === undefined ? [] : preparer.transferables(result.prepared)))
      : [];
    parentPort?.postMessage({ batch: request.batch, results, newEntries } satisfies GuideWorkerReply, transfer);
  });
}

// Batches posted while the preparer loads wait in the port until the listener is attached. A
// module that fails to load is an uncaught error: the reading thread reports the worker's failure.
void loadPreparer(preparerModuleUrl).then(answerBatches);

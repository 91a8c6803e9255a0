/**
 * `guides serve --watch`, the authors' loop: imports the content folder again after each change in
 * it, one import at a time. A folder with a problem changes nothing (imports are all-or-nothing),
 * so the last good content stays served while the log names the file and field to fix.
 */
import { watch } from 'node:fs';
import type { Logger } from 'pino';
import type { GuideStore } from '../store/guide-store.js';
import { importContentFolder } from './import-content.js';
import { formatProblem } from './problems.js';

/** Editors save in several steps (a temporary file, a rename): one import after the burst settles. */
const SETTLE_MS = 200;

export interface ContentWatcher {
  close(): Promise<void>;
}

export function watchContentFolder(
  dir: string,
  store: GuideStore,
  logger: Logger,
  options: { maxGuideBytes?: number } = {},
): ContentWatcher {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let changedMeanwhile = false;
  let isClosed = false;

  const reimport = async (): Promise<void> => {
    const result = await importContentFolder(store, dir, options);
    if (result.summary) {
      const { created, updated, moved, contentVersion } = result.summary;
      logger.info({ created, updated, moved, contentVersion }, 'content folder changed: imported');
      return;
    }
    for (const problem of result.problems)
      logger.error({ problem }, `content problem, the last good content stays served: ${formatProblem(problem)}`);
  };
  const run = (): void => {
    if (isClosed) return;
    if (running) {
      changedMeanwhile = true;
      return;
    }
    running = reimport()
      .catch((err: unknown) => logger.error({ err }, 'importing the changed content folder failed'))
      .finally(() => {
        running = undefined;
        if (changedMeanwhile) {
          changedMeanwhile = false;
          run();
        }
      });
  };

  // Recursive watching works on Linux from Node 20 (and on macOS and Windows natively).
  const watcher = watch(dir, { recursive: true }, () => {
    clearTimeout(timer);
    timer = setTimeout(run, SETTLE_MS);
  });
  watcher.on('error', (err) => logger.error({ err, dir }, 'watching the content folder failed'));
  logger.info({ contentDir: dir }, 'watching the content folder: a change is imported');
  // Once now too: the database may hold content older than the folder.
  run();
  return {
    close: async () => {
      isClosed = true;
      clearTimeout(timer);
      watcher.close();
      await running;
    },
  };
}

/** `guides serve`: one process, or N worker processes sharing the port (node:cluster). */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Config } from './config.js';
import { startServer } from './server.js';

function parseWorkers(value: string | undefined): number {
  if (value === undefined) return 1;
  if (value === 'auto') return availableParallelism();
  if (!/^[1-9][0-9]{0,2}$/.test(value)) throw Object.assign(new Error('--workers must be a whole number from 1 to 999, or auto'), { code: 'ERR_PARSE_ARGS_WORKERS' });
  return Number(value);
}

export async function runServe(config: Config, workersOption: string | undefined): Promise<number> {
  const workers = parseWorkers(workersOption);
  if (workers === 1 || !cluster.isPrimary) {
    await startServer(config, { handleSignals: true });
    return new Promise<number>(() => {
      // Serving until a signal ends the process.
    });
  }
  return runPrimary(config, workers);
}

async function runPrimary(config: Config, workers: number): Promise<number> {
  // Migrate and do the first-run import once, before any worker starts, so workers never race on it.
  const { openStore, sqliteFileOf } = await import('./store/open-store.js');
  const { importContentFolder } = await import('./content/import-content.js');
  const store = await openStore({ databaseUrl: config.databaseUrl, poolSize: 1 });
  await store.migrate();
  if (sqliteFileOf(config.databaseUrl) !== undefined && (await store.isEmpty())) {
    const result = await importContentFolder(store, config.contentDir);
    if (!result.summary) throw new Error(`the content folder ${config.contentDir} has problems; run guides import to see them`);
  }
  await store.close();

  let stopping = false;
  for (let i = 0; i < workers; i += 1) cluster.fork();
  cluster.on('exit', (worker, code) => {
    if (!stopping) {
      console.error(`worker ${worker.process.pid} exited with ${code}; starting another`);
      cluster.fork();
    }
  });
  return new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) return;
      stopping = true;
      const alive = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
      let remaining = alive.length;
      let failed = false;
      if (remaining === 0) resolve(0);
      for (const worker of alive) {
        worker.once('exit', (code) => {
          failed ||= code !== 0;
          remaining -= 1;
          if (remaining === 0) resolve(failed ? 1 : 0);
        });
        worker.process.kill(signal);
      }
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

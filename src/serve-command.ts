/** `guides serve`: one process, or N worker processes sharing the port (node:cluster). */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { pino } from 'pino';
import type { Config } from './config.js';

/** A worker that dies this soon after it started is restarted only after a pause, not in a tight loop. */
const EARLY_EXIT_MS = 5000;
const RESTART_PAUSE_MS = 1000;

function parseWorkers(value: string | undefined): number {
  if (value === undefined) return 1;
  if (value === 'auto') return availableParallelism();
  if (!/^[1-9][0-9]{0,2}$/.test(value))
    throw Object.assign(new Error('--workers must be a whole number from 1 to 999, or auto'), { code: 'ERR_PARSE_ARGS_WORKERS' });
  return Number(value);
}

/**
 * How far V8 lets a heap grow past what its last full collection kept before it collects again:
 * 1.5×, where V8 itself picks up to 4× while collections are quick. A server's live heap is small
 * and nearly everything it allocates dies within a request, but what survives a young collection
 * piles up in the old generation until the next full one; a lower growth keeps the process's
 * resident memory down at the same request rate. The flag is read at each
 * collection, so setting it here (for every thread's heap: the search workers' too) takes effect at
 * once. An operator's own --heap-growing-percent on node's command line wins (NODE_OPTIONS cannot
 * carry it: node refuses to start with it there).
 */
const HEAP_GROWING_PERCENT = 50;

/** The V8 flag `guides serve` sets, or undefined when node's command line (`execArgv`) already sets one. */
export function heapGrowthFlag(execArgv: readonly string[]): string | undefined {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg)) ? undefined : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

function limitHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv);
  if (flag !== undefined) setFlagsFromString(flag);
}

export interface ServeOptions {
  /** --workers: a number, auto, or undefined for one process. */
  workers: string | undefined;
  /** --watch: import CONTENT_DIR again after each change in it. */
  watch: boolean;
}

export async function runServe(config: Config, options: ServeOptions): Promise<number> {
  const workers = parseWorkers(options.workers);
  if (options.watch) {
    if (workers !== 1) throw Object.assign(new Error('--watch runs one process: leave out --workers'), { code: 'ERR_PARSE_ARGS_WATCH' });
    // Several instances on PostgreSQL each watching a folder would import it against each other.
    if (!config.databaseUrl.startsWith('sqlite:')) {
      throw new Error(
        '--watch works on the embedded database only (DATABASE_URL=sqlite:<file>); on PostgreSQL, run guides import after each change',
      );
    }
  }
  if (workers === 1 || !cluster.isPrimary) {
    limitHeapGrowth();
    // Loaded here, not at the top: the primary never needs the HTTP stack, and loading less before
    // installing its signal handlers leaves less time in which a signal kills it outright.
    const { startServer } = await import('./server.js');
    try {
      await startServer(config, { handleSignals: true, watchContent: options.watch });
    } catch (error) {
      // A worker process's channel to the primary would keep it alive: leave, so that it exits
      // with the error. (worker.disconnect(), not process.disconnect(): after the latter the
      // cluster module exits the process with 0.)
      cluster.worker?.disconnect();
      throw error;
    }
    return new Promise<number>(() => {
      // Serving until a signal ends the process.
    });
  }
  return runPrimary(config, workers);
}

async function runPrimary(config: Config, workers: number): Promise<number> {
  // Handlers first: a signal during the first-run import stops cleanly once the import's single
  // transaction is done, instead of killing the process mid-way.
  let stopSignal: NodeJS.Signals | undefined;
  let stop: ((signal: NodeJS.Signals, startFailed?: boolean) => void) | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopSignal) return;
    stopSignal = signal;
    stop?.(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'primary' } });
  // Migrate and do the first-run import once, before any worker starts, so workers never race on it.
  const { openStore } = await import('./store/open-store.js');
  const { ensureContent } = await import('./server.js');
  const { store } = await openStore({ databaseUrl: config.databaseUrl, poolSize: 1 });
  try {
    await store.migrate();
    await ensureContent(store, config, log);
  } finally {
    await store.close();
  }
  if (stopSignal) return 0;

  if (config.rateLimitPerMinute > 0 && config.redisUrl === undefined) {
    log.warn(
      { workers },
      'without REDIS_URL each worker keeps its own rate-limit counters, so a client may get up to workers × RATE_LIMIT_PER_MINUTE; set REDIS_URL to share them',
    );
  }
  const { answerClusterMetricsRequests } = await import('./http/plugins/metrics-cluster.js');
  answerClusterMetricsRequests();
  let stopping = false;
  const startedAt = new Map<number, number>();
  const fork = (): void => {
    const worker = cluster.fork();
    startedAt.set(worker.id, Date.now());
  };
  for (let i = 0; i < workers; i += 1) fork();
  const listening = new Set<number>();
  cluster.on('listening', (worker) => listening.add(worker.id));
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0);
    startedAt.delete(worker.id);
    if (stopping) return;
    if (listening.size === 0) {
      // No worker ever listened: the start itself failed (a port already taken, say), and every
      // worker would fail the same way again; stop, as a single process does, instead of
      // restarting them for ever.
      log.error({ worker: worker.process.pid, code, signal }, 'a worker exited before any was listening: stopping');
      stop?.('SIGTERM', true);
      return;
    }
    log.error({ worker: worker.process.pid, code, signal }, 'worker exited; starting another');
    if (lived < EARLY_EXIT_MS) setTimeout(() => stopping || fork(), RESTART_PAUSE_MS);
    else fork();
  });
  return new Promise<number>((resolve) => {
    stop = (signal: NodeJS.Signals, startFailed = false): void => {
      stopping = true;
      log.info({ signal }, 'shutting down: workers finish their in-flight requests');
      const alive = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
      let remaining = alive.length;
      let failed = startFailed;
      if (remaining === 0) resolve(failed ? 1 : 0);
      // Workers enforce SHUTDOWN_GRACE_MS themselves; this only catches one that hangs regardless.
      const backstop = setTimeout(() => {
        log.error('workers did not exit within the grace period: killing them');
        for (const worker of alive) worker.process.kill('SIGKILL');
      }, config.shutdownGraceMs + 5000);
      backstop.unref();
      for (const worker of alive) {
        worker.once('exit', (code, exitSignal) => {
          // Stopped by the signal before it listened (still loading): nothing was in flight, not a failure.
          const stoppedWhileStarting = exitSignal === signal && !listening.has(worker.id);
          failed ||= code !== 0 && !stoppedWhileStarting;
          remaining -= 1;
          if (remaining === 0) resolve(failed ? 1 : 0);
        });
        worker.process.kill(signal);
      }
    };
    if (stopSignal) stop(stopSignal);
  });
}

/** Process entry for serving: loadConfig → openStore → ensureContent (first-run import) → buildApp → listen; graceful close. */
import { pino } from 'pino';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { ContentWatcher } from './content/watch-content.js';
import type { GuideStore } from './store/guide-store.js';
import { openStore, sqliteFileOf } from './store/open-store.js';

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine reaches. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^(::ffff:)?127\./.test(host);
}

/**
 * The one first-run import: an empty embedded database is filled from CONTENT_DIR, so `guides
 * serve` works out of the box. Both a single server and the cluster primary (before any worker
 * starts) call it. Throws, after logging every problem, when the folder cannot be imported.
 */
export async function ensureContent(store: GuideStore, config: Config, log: Logger): Promise<void> {
  if (sqliteFileOf(config.databaseUrl) === undefined || !(await store.isEmpty())) return;
  log.info({ contentDir: config.contentDir }, 'empty database: importing the content folder first');
  // Only a first run imports: the content parsers are not loaded otherwise (a faster start).
  const { importContentFolder } = await import('./content/import-content.js');
  const result = await importContentFolder(store, config.contentDir, { maxGuideBytes: config.maxGuideBytes });
  if (result.summary) return;
  for (const problem of result.problems) log.error({ problem }, 'content problem');
  throw new Error(`the content folder ${config.contentDir} has ${result.problems.length} problem(s); fix them or set CONTENT_DIR`);
}

export interface RunningServer {
  close(): Promise<void>;
}

export interface StartOptions {
  /** Install SIGTERM/SIGINT handlers that drain and exit. */
  handleSignals?: boolean;
  /** Import CONTENT_DIR again whenever a file in it changes (`serve --watch`; embedded database only). */
  watchContent?: boolean;
}

/** Starts serving; resolves once listening. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = pino({ level: config.logLevel, base: { pid: process.pid } });
  if (!isLoopback(config.host) && config.publicBaseUrl === `http://localhost:${config.port}`) {
    // Every absolute link (list pages, cursors' next links, OpenAPI servers, /docs) would point clients at their own machine.
    logger.warn(
      { host: config.host, publicBaseUrl: config.publicBaseUrl },
      'PUBLIC_BASE_URL is left at its default while HOST is not a loopback address: every absolute link points at localhost; set PUBLIC_BASE_URL to the URL clients reach this service at',
    );
  }
  const running: { close?: () => Promise<void> } = {};
  let stopSignal: NodeJS.Signals | undefined;
  const shutDown = (signal: NodeJS.Signals, stop: () => Promise<void>): void => {
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: no new connections, finishing in-flight requests');
    stop().then(
      () => {
        logger.info('shutdown complete');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  if (options.handleSignals) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      // Installed before start-up, so a signal during it is a clean stop, not a kill; and `on`, not
      // `once`: under `--workers`, Ctrl-C reaches a worker twice (from the terminal and from the
      // primary), and a second default-handled SIGINT would kill it mid-drain.
      process.on(signal, () => {
        if (stopSignal) return;
        stopSignal = signal;
        if (running.close) shutDown(signal, running.close);
      });
    }
  }

  const { store, searchPages } = await openStore({
    databaseUrl: config.databaseUrl,
    poolSize: config.pgPoolSize,
    watchFile: true,
    searchWorkers: config.searchWorkers,
    searchPriority: config.searchPriority,
  });
  await store.migrate();
  try {
    await ensureContent(store, config, logger);
  } catch (error) {
    await store.close();
    throw error;
  }
  // Loaded here, not at the top: the cluster primary imports this module for ensureContent alone
  // and never needs the HTTP stack.
  const { buildApp } = await import('./app.js');
  const app = buildApp({ config, store, searchPages, logger });
  let watcher: ContentWatcher | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const timer = setTimeout(() => {
        logger.error({ graceMs: config.shutdownGraceMs }, 'shutdown grace period over: exiting with requests in flight');
        process.exit(1);
      }, config.shutdownGraceMs);
      timer.unref();
      await watcher?.close();
      await app.close();
      await store.close();
      clearTimeout(timer);
    })();
    return closing;
  };
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // A port already taken, say. Getting ready started the search workers, which would keep the
    // process alive, serving nothing and deaf to SIGTERM (nothing to stop yet): close everything,
    // so that the command exits with the error.
    await close().catch(() => undefined);
    throw error;
  }
  logger.info({ url: config.publicBaseUrl }, 'ready');
  if (options.watchContent) {
    if (sqliteFileOf(config.databaseUrl) === undefined) throw new Error('--watch works on the embedded database only');
    const { watchContentFolder } = await import('./content/watch-content.js');
    watcher = watchContentFolder(config.contentDir, store, logger, { maxGuideBytes: config.maxGuideBytes });
  }

  running.close = close;
  // A signal that arrived while starting: stop now that there is something to stop.
  if (stopSignal) shutDown(stopSignal, close);
  return { close };
}

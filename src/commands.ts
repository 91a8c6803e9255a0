/** The `guides` command: serve | import <dir> | migrate (started by cli.ts). */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { SingleBar } from 'cli-progress';
import { ConfigError, loadConfig } from './config.js';
import { formatProblem } from './content/problems.js';
import { openStore } from './store/open-store.js';
import { SOFTWARE_VERSION } from './version.js';

const USAGE = `Usage: guides <command> [options]

Commands:
  serve [--workers N|auto]  migrate the database, then serve (imports CONTENT_DIR into an empty embedded database)
  import <dir>              validate a content folder and load it; exit 1 with every problem listed, nothing changed
  migrate                   create or upgrade the database schema, then exit

Options:
  -h, --help                show this help
  -v, --version             show the version

Configuration comes from environment variables (DATABASE_URL, PORT, HOST, PUBLIC_BASE_URL, CONTENT_DIR,
CURSOR_SECRET, REDIS_URL, RATE_LIMIT_PER_MINUTE, TRUST_PROXY, LOG_LEVEL, ...): see the README.`;

/** Files at which import shows a progress bar (on a terminal only). */
const PROGRESS_THRESHOLD = 50;

class UsageError extends Error {}

async function runImport(dir: string): Promise<number> {
  // Loaded by the commands that use them: `guides serve` on an imported database never needs the
  // content parsers (YAML, front matter, Markdown) or the progress bar, and starts sooner without.
  const [{ SingleBar, Presets }, { formatImportSummary, importContentFolder }] = await Promise.all([
    import('cli-progress'), import('./content/import-content.js'),
  ]);
  const config = loadConfig();
  const store = await openStore({ databaseUrl: config.databaseUrl, poolSize: 2 });
  try {
    await store.migrate();
    let bar: SingleBar | undefined;
    const result = await importContentFolder(store, path.resolve(dir), {
      maxGuideBytes: config.maxGuideBytes,
      onGuideParsed: (done, total) => {
        if (!process.stderr.isTTY || total < PROGRESS_THRESHOLD) return;
        if (!bar) {
          bar = new SingleBar({ stream: process.stderr, format: 'Validating {bar} {value}/{total} files' }, Presets.shades_classic);
          bar.start(total, 0);
        }
        bar.update(done);
        if (done === total) bar.stop();
      },
    });
    if (!result.summary) {
      console.error(`Import refused: ${result.problems.length} problem(s) found; nothing was changed.`);
      for (const problem of result.problems) console.error(`  ${formatProblem(problem)}`);
      return 1;
    }
    console.log(formatImportSummary(result.summary, result.guideFileCount));
    return 0;
  } finally {
    await store.close();
  }
}

async function runMigrate(): Promise<number> {
  const config = loadConfig();
  const store = await openStore({ databaseUrl: config.databaseUrl, poolSize: 1 });
  try {
    await store.migrate();
    console.log('Database schema is up to date.');
    return 0;
  } finally {
    await store.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      workers: { type: 'string' },
    },
  });
  if (values.version) {
    console.log(SOFTWARE_VERSION);
    return 0;
  }
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  if (command !== 'serve' && values.workers !== undefined) throw new UsageError('--workers goes with serve');
  switch (command) {
    case 'serve': {
      if (rest.length > 0) throw new UsageError('serve takes no arguments');
      const { runServe } = await import('./serve-command.js');
      return runServe(loadConfig(), values.workers);
    }
    case 'import':
      if (rest.length !== 1 || !rest[0]) throw new UsageError('import takes exactly one argument: the content folder');
      return runImport(rest[0]);
    case 'migrate':
      if (rest.length > 0) throw new UsageError('migrate takes no arguments');
      return runMigrate();
    default:
      throw new UsageError(`unknown command: ${command.slice(0, 40)}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exitCode = 1;
    } else if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`guides: ${(error as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else {
      console.error(`guides: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  },
);



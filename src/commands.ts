/** The `guides` command: serve | import <dir> | migrate (started by cli.ts). */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import type * as CliProgress from 'cli-progress';
import { COMMANDS, USAGE, unknownOptionMessage } from './command-specs.js';
import { ConfigError, loadConfig } from './config.js';
import { formatProblem } from './content/problems.js';
import { openStore } from './store/open-store.js';
import { SOFTWARE_VERSION } from './lib/version.js';

/** Files at which import shows a progress bar (on a terminal only). */
const PROGRESS_THRESHOLD = 50;

/** A command line that does not say what to do: exit 2, with where to read how. */
class UsageError extends Error {
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

const GLOBAL_OPTIONS = { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } } as const;

/** parseArgs, strict, with an unknown option named with the closest known one. */
function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, command?: string) {
  const { tokens } = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'option' && !Object.hasOwn(options, token.name))
      throw new UsageError(unknownOptionMessage(token.rawName, options), command);
  }
  try {
    return parseArgs({ args, options, allowPositionals: true });
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((error as Error).message, command);
    throw error;
  }
}

/** The import's progress on a terminal: files read, validated and written, with their rate; then the commit. */
function importProgress(
  bars: typeof CliProgress,
  dryRun: boolean,
): { onGuideParsed: (done: number, total: number) => void; stop: () => void } {
  let bar: CliProgress.SingleBar | undefined;
  const reading = dryRun ? 'reading, validating, planning' : 'reading, validating, writing';
  const finishing = dryRun ? 'planning' : 'committing';
  const startedAt = Date.now();
  const rate = (done: number): string => (done / Math.max((Date.now() - startedAt) / 1000, 0.001)).toFixed(0);
  return {
    onGuideParsed: (done, total) => {
      if (!process.stderr.isTTY || total < PROGRESS_THRESHOLD) return;
      if (!bar) {
        bar = new bars.SingleBar(
          { stream: process.stderr, format: 'Importing {bar} {value}/{total} files | {rate} files/s | {phase}' },
          bars.Presets.shades_classic,
        );
        bar.start(total, 0, { rate: '0', phase: reading });
      }
      // The last guide read, the transaction still has its commit (and SQLite its search index) to write.
      bar.update(done, { rate: rate(done), phase: done === total ? finishing : reading });
    },
    stop: () => {
      if (!bar) return;
      bar.update({ phase: 'done' });
      bar.stop();
    },
  };
}

async function runImport(dir: string, { dryRun }: { dryRun: boolean }): Promise<number> {
  // Loaded by the commands that use them: `guides serve` on an imported database never needs the
  // content parsers (YAML, front matter, Markdown) or the progress bar, and starts sooner without.
  const [bars, { formatImportSummary, importContentFolder, planContentFolder }, { existsSync }, { sqliteFileOf }] = await Promise.all([
    import('cli-progress'),
    import('./content/import-content.js'),
    import('node:fs'),
    import('./store/open-store.js'),
  ]);
  const config = loadConfig();
  // A dry run against an embedded database that does not exist yet plans against an empty one, and leaves no file behind.
  const file = sqliteFileOf(config.databaseUrl);
  const databaseUrl = dryRun && file !== undefined && file !== ':memory:' && !existsSync(file) ? 'sqlite::memory:' : config.databaseUrl;
  const { store } = await openStore({ databaseUrl, poolSize: 2 });
  const progress = importProgress(bars, dryRun);
  try {
    await store.migrate();
    const load = dryRun ? planContentFolder : importContentFolder;
    const result = await load(store, path.resolve(dir), {
      maxGuideBytes: config.maxGuideBytes,
      onGuideParsed: progress.onGuideParsed,
    }).finally(progress.stop);
    if (!result.summary) {
      console.error(`Import refused: ${result.problems.length} problem(s) found; nothing was changed.`);
      for (const problem of result.problems) console.error(`  ${formatProblem(problem)}`);
      return 1;
    }
    console.log(formatImportSummary(result.summary, result.guideFileCount, { dryRun }));
    return 0;
  } finally {
    await store.close();
  }
}

async function runMigrate(): Promise<number> {
  const config = loadConfig();
  const { store } = await openStore({ databaseUrl: config.databaseUrl, poolSize: 1 });
  try {
    await store.migrate();
    console.log('Database schema is up to date.');
    return 0;
  } finally {
    await store.close();
  }
}

function isCommand(name: string | undefined): name is keyof typeof COMMANDS {
  return name !== undefined && Object.hasOwn(COMMANDS, name);
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (!isCommand(first)) {
    const { values, positionals } = parse(argv, GLOBAL_OPTIONS);
    const [command, topic] = positionals;
    if (values.version) {
      console.log(SOFTWARE_VERSION);
      return 0;
    }
    if (values.help || command === 'help') {
      const about = values.help ? command : topic;
      console.log(isCommand(about) ? COMMANDS[about].help : USAGE);
      return 0;
    }
    if (command === undefined) {
      console.error(USAGE);
      return 2;
    }
    throw new UsageError(`unknown command: ${command.slice(0, 40)}; the commands are ${Object.keys(COMMANDS).join(', ')}`);
  }
  const spec = COMMANDS[first];
  const { values, positionals } = parse(rest, spec.options, first);
  if (values.help) {
    console.log(spec.help);
    return 0;
  }
  if (positionals.length !== spec.positionals) {
    // Only import takes an argument.
    throw new UsageError(
      spec.positionals === 0 ? `${first} takes no arguments` : `${first} takes exactly one argument: the content folder`,
      first,
    );
  }
  switch (first) {
    case 'serve': {
      const { runServe } = await import('./serve-command.js');
      return runServe(loadConfig(), { workers: values.workers as string | undefined, watch: values.watch === true });
    }
    case 'import':
      return runImport(positionals[0] as string, { dryRun: values['dry-run'] === true });
    case 'migrate':
      return runMigrate();
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
      // Other ERR_PARSE_ARGS errors are serve-command.ts's, on the values of serve's options.
      const where = error instanceof UsageError ? error.command : 'serve';
      const command = where === undefined ? 'guides' : `guides ${where}`;
      console.error(`${command}: ${(error as Error).message}\nRun ${command} --help for its usage.`);
      process.exitCode = 2;
    } else {
      console.error(`guides: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  },
);

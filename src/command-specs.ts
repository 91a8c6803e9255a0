/** The `guides` command's subcommands: their options (for node:util parseArgs) and help texts. */
import type { ParseArgsConfig } from 'node:util';
import leven, { closestMatch } from 'leven';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface CommandSpec {
  options: Options;
  /** Positional arguments: exactly this many. */
  positionals: number;
  help: string;
}

const EXIT_CODES = 'Exit codes: 0 done, 1 refused or failed (the reason on stderr), 2 usage error.';
const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const satisfies Options;

export const COMMANDS: Readonly<Record<'serve' | 'import' | 'migrate', CommandSpec>> = {
  serve: {
    options: { ...HELP_OPTION, workers: { type: 'string' }, watch: { type: 'boolean' } },
    positionals: 0,
    help: `Usage: guides serve [--workers N|auto] [--watch]

Migrates the database, then serves the API. On an empty embedded (SQLite) database it imports
CONTENT_DIR first. SIGTERM or SIGINT stops taking connections, finishes the requests in flight
and exits 0 within SHUTDOWN_GRACE_MS. GET /healthz answers while the process lives, GET /readyz
while the database answers too.

Options:
  --workers N|auto  N processes on one port (auto: one a CPU); default 1
  --watch           embedded database only: import CONTENT_DIR again whenever a file in it
                    changes; a broken file is logged with its file and field, and the last good
                    content stays served (for authors; one process only)
  -h, --help        show this help

Reads: DATABASE_URL, PORT, HOST, PUBLIC_BASE_URL, CONTENT_DIR, CURSOR_SECRET, REDIS_URL,
RATE_LIMIT_PER_MINUTE, TRUST_PROXY, LOG_LEVEL, SHUTDOWN_GRACE_MS, CONTENT_POLL_MS, PG_POOL_SIZE,
SEARCH_WORKERS, and the limits listed in the README ("Configuration").

${EXIT_CODES}`,
  },
  import: {
    options: { ...HELP_OPTION, 'dry-run': { type: 'boolean' } },
    positionals: 1,
    help: `Usage: guides import <dir> [--dry-run]

Validates the content folder <dir> (product.yaml, resources.yaml, guides/*.md), then loads it in
one transaction: prints what it created, updated, left unchanged and moved between states. When
any file has a problem, every problem is listed with its file and field, nothing is changed, and
the exit code is 1. Guides that left the folder are archived, never deleted.

Options:
  --dry-run   validate and print the plan (created, updated, unchanged, moved); write no content
  -h, --help  show this help

Reads: DATABASE_URL.

${EXIT_CODES}`,
  },
  migrate: {
    options: { ...HELP_OPTION },
    positionals: 0,
    help: `Usage: guides migrate

Creates or upgrades the database schema, then exits. Safe while other instances run or start.

Options:
  -h, --help  show this help

Reads: DATABASE_URL.

${EXIT_CODES}`,
  },
};

export const USAGE = `Usage: guides <command> [options]

Commands:
  serve [--workers N|auto] [--watch]  migrate the database, then serve (imports CONTENT_DIR into an empty embedded database)
  import <dir> [--dry-run]            validate a content folder and load it; exit 1 with every problem listed, nothing changed
  migrate                             create or upgrade the database schema, then exit

Options:
  -h, --help                          show this help; guides <command> --help shows a command's
  -v, --version                       show the version

Configuration comes from environment variables (DATABASE_URL, PORT, HOST, PUBLIC_BASE_URL, CONTENT_DIR,
CURSOR_SECRET, REDIS_URL, RATE_LIMIT_PER_MINUTE, TRUST_PROXY, LOG_LEVEL, ...): see the README.

${EXIT_CODES}`;

/** "unknown option --wokers; did you mean --workers?", or the list of options when none is close. */
export function unknownOptionMessage(rawName: string, options: Options): string {
  const names = Object.keys(options).map((name) => `--${name}`);
  const given = (rawName.split('=')[0] ?? rawName).slice(0, 40);
  const closest = closestMatch(given, names);
  // closestMatch always answers: a hint is worth giving for a typo only, not for another word.
  const isTypo = closest !== undefined && leven(given, closest) <= Math.max(2, Math.floor(closest.length / 3));
  return `unknown option ${given}; ${isTypo ? `did you mean ${closest}?` : `the options are ${names.join(', ')}`}`;
}

/** The built `guides` command as users run it, and what a store serves, for CLI tests. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { openStore } from '../../src/store/open-store.js';
import { createSqliteGuideStore } from '../../src/store/sqlite/sqlite-guide-store.js';

const run = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const CLI = path.join(ROOT, 'dist', 'cli.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `guides <args>` as a child process with only PATH and `env`; a non-zero exit is a result, not a throw. */
export async function guides(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Everything a store serves, for before/after comparisons: of a SQLite file, or of a postgres:// URL. */
export async function storeSnapshot(database: string): Promise<string> {
  const store = /^postgres(ql)?:\/\//.test(database)
    ? (await openStore({ databaseUrl: database, poolSize: 1 })).store
    : createSqliteGuideStore(database);
  try {
    const index = await store.listPublishedIndex();
    const details = await Promise.all(index.map((g) => store.getPublishedGuide(g.slug)));
    return JSON.stringify([await store.contentVersion(), await store.getProduct(), await store.getResources(), details]);
  } finally {
    await store.close();
  }
}

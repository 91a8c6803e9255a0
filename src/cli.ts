#!/usr/bin/env node
/**
 * The `guides` command's entry point: turns Node's compile cache on, then loads and runs the
 * command (commands.ts). Everything the command loads comes after the cache is on, so it all counts.
 */
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Node 22.1+ keeps V8's compiled code of the modules it loads on disk, so a start after the first
// skips compiling the app and its dependencies again (docs/performance.md). Node 20 has none.
// The cache lives beside the installed packages (a read-only install just goes without: the call
// never throws); NODE_COMPILE_CACHE chooses another directory, NODE_DISABLE_COMPILE_CACHE=1 none.
// The directory is passed on in the environment, so that the search worker threads and the
// processes of `serve --workers` use it too.
const enableCompileCache = (module as { enableCompileCache?: typeof module.enableCompileCache }).enableCompileCache;
if (enableCompileCache) {
  const own = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache', 'guides-compile-cache');
  const { directory } = enableCompileCache(process.env.NODE_COMPILE_CACHE ? undefined : own);
  if (directory !== undefined) process.env.NODE_COMPILE_CACHE = directory;
}

// The process's entry, never a worker thread's module: its top-level await cannot meet a stopped thread.
// eslint-disable-next-line no-restricted-syntax
await import('./commands.js');

/**
 * How `npm start` runs the server, for the scripts that start one to measure it (the benchmark,
 * the soak): they start `node <these options> dist/cli.js serve` with these environment variables,
 * as operators are told to.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface StartCommand {
  /** The `NAME=value` assignments before `node` (such as MALLOC_ARENA_MAX=2). */
  env: Record<string, string>;
  /** The options between `node` and `dist/cli.js`. */
  nodeOptions: string[];
}

/**
 * `dir`'s package.json start script, `[npm run build &&] [NAME=value …] node [options …] dist/cli.js serve`;
 * nothing if it has another shape.
 */
export function startCommand(dir: string): StartCommand {
  const { scripts } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const words = (scripts?.start ?? '').split('&&').at(-1)!.trim().split(/\s+/);
  const node = words.indexOf('node');
  const cli = words.indexOf('dist/cli.js');
  const assignments = words.slice(0, Math.max(node, 0)).map((word) => /^([A-Z_][A-Z0-9_]*)=(\S*)$/.exec(word));
  if (node < 0 || cli <= node || assignments.some((match) => match === null)) return { env: {}, nodeOptions: [] };
  return { env: Object.fromEntries(assignments.map((match) => [match![1], match![2]])), nodeOptions: words.slice(node + 1, cli) };
}

/**
 * How `npm start` runs the server, for the scripts that start one to measure it (the benchmark,
 * the soak): they start `node <these options> dist/cli.js serve`, as operators are told to.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The options between `node` and `dist/cli.js` in `dir`'s package.json start script (none if it has another shape). */
export function startNodeOptions(dir: string): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const words = (scripts?.start ?? '').trim().split(/\s+/);
  const cli = words.indexOf('dist/cli.js');
  return words[0] === 'node' && cli > 0 ? words.slice(1, cli) : [];
}

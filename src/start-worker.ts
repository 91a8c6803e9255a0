/**
 * Starts a worker thread on a module next to the calling one. Built, that is the .js file. Run
 * from TypeScript sources (tests, `npm run dev`), a worker does not inherit the loader that runs
 * them: it registers tsx, then imports the .ts file (as sqlite-search-pool.ts does).
 */
import { Worker } from 'node:worker_threads';

export function startWorker(callerUrl: string, name: string, workerData: unknown): Worker {
  // Workers take the process's Node options (--cpu-prof, --max-old-space-size, …), but not
  // --input-type, which a worker refuses (a process started with `node --input-type=module -e`).
  const execArgv = process.execArgv.filter((option) => !option.startsWith('--input-type'));
  const isSource = callerUrl.endsWith('.ts');
  const entry = new URL(`./${name}.${isSource ? 'ts' : 'js'}`, callerUrl);
  if (!isSource) return new Worker(entry, { workerData, execArgv });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry.href)}))`;
  return new Worker(bootstrap, { eval: true, workerData, execArgv });
}

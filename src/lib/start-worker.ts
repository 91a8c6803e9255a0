/**
 * Starts a worker thread on a module next to the calling one. Built, that is the .js file. Run
 * from TypeScript sources (tests, `npm run dev`), a worker does not inherit the loader that runs
 * them: it registers tsx, then imports the .ts file.
 */
import { Worker } from 'node:worker_threads';
import type { ResourceLimits } from 'node:worker_threads';

export function startWorker(callerUrl: string, name: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  // Workers take the process's Node options (--cpu-prof, --max-old-space-size, …), but not
  // --input-type (a process started with `node --input-type=module -e`) nor npm start's
  // --max-semi-space-size, which a worker refuses: its young generation is set by `resourceLimits`.
  const execArgv = process.execArgv.filter((option) => !/^--(input-type|max[-_]semi[-_]space[-_]size)\b/.test(option));
  const isSource = callerUrl.endsWith('.ts');
  const entry = new URL(`./${name}.${isSource ? 'ts' : 'js'}`, callerUrl);
  const tsx = isSource ? import.meta.resolve('tsx/esm/api') : '';
  const start = (options: string[]): Worker =>
    isSource
      ? new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry.href)}))`, {
          eval: true,
          workerData,
          execArgv: options,
          ...(resourceLimits ? { resourceLimits } : {}),
        })
      : new Worker(entry, { workerData, execArgv: options, ...(resourceLimits ? { resourceLimits } : {}) });
  try {
    return start(execArgv);
  } catch (error) {
    // Options a worker refuses (process-wide ones such as --trace-gc, given to `node` by an
    // operator) must not stop the command: the worker then runs without any.
    if ((error as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
    return start([]);
  }
}

/** Ports, CPU pinning and the `guides serve` child process, shared by the benchmarks and the soak run. */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
    server.on('error', reject);
  });
}

let tasksetWorks: boolean | undefined;

/** Whether `taskset` can pin a process here (Linux with util-linux, and a second CPU to pin to). */
export function hasTaskset(): boolean {
  if (tasksetWorks === undefined) {
    try {
      execFileSync('taskset', ['-c', '0', 'true']);
      tasksetWorks = true;
    } catch {
      tasksetWorks = false;
    }
  }
  return tasksetWorks;
}

/** The command and arguments that run `argv` on CPU `cpu` when taskset works, else as is. */
export function pinnedToCpu(cpu: string | undefined, argv: readonly string[]): [string, string[]] {
  const [command, ...args] = argv as [string, ...string[]];
  return cpu !== undefined && hasTaskset() ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
}

/** The status of a GET on its own connection, or undefined when nothing answers. */
function statusOf(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.on('error', () => resolve(undefined));
    request.setTimeout(10_000, () => request.destroy(new Error('timeout')));
  });
}

export interface ServerStart {
  /** The built CLI (dist/cli.js) to run `serve` with. */
  cli: string;
  cwd?: string;
  /** Node options before the CLI, as npm start gives them (scripts/start-command.ts). */
  nodeOptions: readonly string[];
  /** The whole environment of the server; PORT is set from `port`. */
  env: NodeJS.ProcessEnv;
  port: number;
  /** The CPU to pin the server to (when taskset works). */
  cpu?: string;
  /** Show the server's stderr as it comes, instead of keeping its last lines for an error message. */
  inheritStderr?: boolean;
  readyTimeoutMs: number;
  /** Time between two /readyz checks. */
  pollMs: number;
}

export interface GuidesServer {
  child: ChildProcess;
  url: string;
  /** From the spawn to the first 200 from /readyz. */
  readyMs: number;
  /** The last chunks of the server's stderr (unless inherited). */
  stderr: string[];
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `guides serve` and resolves once /readyz answers 200; throws with its stderr when it exits first. */
export async function startGuidesServer(start: ServerStart): Promise<GuidesServer> {
  const url = `http://127.0.0.1:${start.port}`;
  const [command, args] = pinnedToCpu(start.cpu, [process.execPath, ...start.nodeOptions, start.cli, 'serve']);
  const started = performance.now();
  const child = spawn(command, args, {
    ...(start.cwd ? { cwd: start.cwd } : {}),
    env: { ...start.env, PORT: String(start.port) },
    // Request logs go to /dev/null: pino still formats and writes every line, nothing reads them.
    stdio: ['ignore', 'ignore', start.inheritStderr ? 'inherit' : 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString());
    if (stderr.length > 50) stderr.shift();
  });
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exited = true;
      resolve(code);
    }),
  );
  for (;;) {
    if (exited) throw new Error(`the server exited before it was ready:\n${stderr.join('')}`);
    if ((await statusOf(`${url}/readyz`)) === 200) break;
    if (performance.now() - started > start.readyTimeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`the server was not ready within ${start.readyTimeoutMs / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, start.pollMs));
  }
  return {
    child,
    url,
    stderr,
    readyMs: performance.now() - started,
    stop: () => {
      if (!exited) child.kill('SIGTERM');
      return exit;
    },
  };
}

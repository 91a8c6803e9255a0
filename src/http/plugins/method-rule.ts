/**
 * The method rule: which methods each path answers. Any other method gets its 405 problem with
 * `Allow` in an onRequest hook, which Fastify runs before it reads or parses a request body, so a
 * POST with broken JSON, a QUERY or a 2 MB PUT are all refused for their method, not their body.
 * OPTIONS answers carry the same `Allow`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { AppError, MCP_METHOD_NOT_ALLOWED_DETAIL } from '../problems.js';

const READ_ONLY = ['GET', 'HEAD', 'OPTIONS'] as const;

/** Paths that answer other methods than READ_ONLY, by exact path, and what their 405 says. */
const METHODS_BY_PATH: Readonly<Record<string, { methods: readonly string[]; detail: string }>> = {
  '/mcp': { methods: ['POST', 'OPTIONS'], detail: MCP_METHOD_NOT_ALLOWED_DETAIL },
};

function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}

/** The methods `path` (without its query) answers. */
export function allowedMethods(path: string): readonly string[] {
  return Object.hasOwn(METHODS_BY_PATH, path) ? (METHODS_BY_PATH[path]?.methods ?? READ_ONLY) : READ_ONLY;
}

/** The `Allow` header of the request target `url` (path and query). */
export function allowHeader(url: string): string {
  return allowedMethods(pathOf(url)).join(', ');
}

function isAllowed(method: string | undefined, url: string): boolean {
  return method !== undefined && allowHeader(url).split(', ').includes(method);
}

/** The 405 problem for `url`: its detail says what the path answers instead. */
export function methodNotAllowed(url: string): AppError {
  const path = pathOf(url);
  const detail = Object.hasOwn(METHODS_BY_PATH, path) ? METHODS_BY_PATH[path]?.detail : undefined;
  return new AppError('method-not-allowed', detail ?? 'This API is read-only: use GET or HEAD.', { headers: { allow: allowHeader(url) } });
}

export function registerMethodRule(app: FastifyInstance): void {
  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
        if (isAllowed(request.method, request.url)) {
          done();
          return;
        }
        // The client waits for a 100 Continue that never comes, so its body never follows: the
        // connection cannot carry another request.
        if (request.headers.expect !== undefined) reply.header('connection', 'close');
        done(methodNotAllowed(request.url));
      });
      // An OPTIONS answer (a preflight included) says what the path answers, as a 405 does.
      instance.addHook('onSend', async (request, reply, payload) => {
        if (request.method === 'OPTIONS') reply.header('allow', allowHeader(request.url));
        return payload;
      });
    }),
  );

  // Node answers `Expect: 100-continue` with 100 Continue by itself unless 'checkContinue' has a
  // listener: a refused method gets its final 405 at once, before the client sends its body.
  const server = app.server;
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (isAllowed(request.method, request.url ?? '/')) response.writeContinue();
    server.emit('request', request, response);
  });
}

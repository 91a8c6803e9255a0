import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * Puts `front` before the request listener of the server Fastify created: `front` answers a
 * request itself or passes it on with `next`. This is the one place that does so, so that what
 * runs before Fastify can be found (and turned off with FAST_PATH=0) in one folder.
 * Fastify's app.inject does not go through it; requests from the network do.
 */
export function inFrontOfFastify(
  app: FastifyInstance,
  front: (request: IncomingMessage, response: ServerResponse, next: RequestListener) => void,
): void {
  const server = app.server;
  const listeners = server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected one request listener on the server, found ${listeners.length}`);
  const [next] = listeners as [RequestListener];
  server.removeListener('request', next);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => front(request, response, next));
}

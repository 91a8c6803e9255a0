import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** A route option that takes one hook or several (onRequest, onSend, …), as a list to add to. */
export function hooksOf<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * Marks a plugin as not encapsulated (what fastify-plugin does, through Fastify's documented
 * `skip-override` property), so its hooks apply application-wide, in registration order: after
 * @fastify/cors, for example, so that a 429 or 503 still carries the CORS headers.
 */
export function globalPlugin<T extends (instance: FastifyInstance) => Promise<void>>(plugin: T): T {
  return Object.assign(plugin, { [Symbol.for('skip-override')]: true });
}

/**
 * Puts `front` before the request listener of the server Fastify created (Fastify's own, or one
 * already put in front of it): `front` answers a request itself or passes it on with `next`.
 * Fastify's app.inject does not go through it; requests from the network do. Only cache hits are
 * answered there (early-answers.ts): what Fastify's hooks can do, they do.
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

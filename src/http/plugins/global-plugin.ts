import type { FastifyInstance } from 'fastify';

/**
 * Marks a plugin as not encapsulated (what fastify-plugin does, through Fastify's documented
 * `skip-override` property), so its hooks apply application-wide, in registration order: after
 * @fastify/cors, for example, so that a 429 or 503 still carries the CORS headers.
 */
/** A route option that takes one hook or several (onRequest, onSend, …), as a list to add to. */
export function hooksOf<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export function globalPlugin<T extends (instance: FastifyInstance) => Promise<void>>(plugin: T): T {
  return Object.assign(plugin, { [Symbol.for('skip-override')]: true });
}

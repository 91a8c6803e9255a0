/**
 * CORS for a public, read-only, credential-free API: every response allows any origin and
 * exposes the headers clients need; every OPTIONS request is answered here, at once, with 204
 * (a preflight, or a plain OPTIONS: the API accepts GET, HEAD and OPTIONS everywhere).
 *
 * What @fastify/cors did with our options (origin '*', no credentials, strictPreflight off,
 * a day's max-age), in one synchronous hook with its header values computed once: that plugin
 * spread its options into a new object and built the route's options twice on every request.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { globalPlugin } from './global-plugin.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the CORS hook answered this OPTIONS request (the catch-all OPTIONS route then has nothing to do). */
    corsPreflightEnabled: boolean;
  }
}

export interface CorsOptions {
  /** Response headers scripts may read. */
  exposedHeaders: readonly string[];
  /** The methods every resource accepts (Access-Control-Allow-Methods and Allow of an OPTIONS answer). */
  methods: readonly string[];
  /** How long browsers may cache a preflight, in seconds. */
  maxAgeSeconds: number;
}

/** Registers the CORS hook (first among the application-wide hooks that may fail, so their errors carry it) and the OPTIONS route. */
export function registerCors(app: FastifyInstance, options: CorsOptions): void {
  const exposed = options.exposedHeaders.join(', ');
  const methods = options.methods.join(', ');
  const maxAge = String(options.maxAgeSeconds);

  const onRequest = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', exposed);
    if (request.raw.method !== 'OPTIONS') {
      done();
      return;
    }
    request.corsPreflightEnabled = true;
    reply.header('access-control-allow-methods', methods);
    reply.header('vary', 'Access-Control-Request-Headers');
    const requested = request.headers['access-control-request-headers'];
    if (requested !== undefined) reply.header('access-control-allow-headers', requested);
    reply.header('access-control-max-age', maxAge);
    reply.header('allow', methods);
    // Safari waits for a body on a 204 without Content-Length.
    reply.code(204).header('content-length', '0').send();
  };

  app.register(globalPlugin(async (instance) => {
    instance.decorateRequest('corsPreflightEnabled', false);
    instance.addHook('onRequest', onRequest);
    // Gives OPTIONS a route on every path (so the router does not 404 it first); the hook answers.
    instance.options('*', { schema: { hide: true } }, (request, reply) => {
      if (!request.corsPreflightEnabled) {
        reply.callNotFound();
        return;
      }
      reply.send();
    });
  }));
}

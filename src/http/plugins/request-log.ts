/**
 * The request id on every response, and one log line per request (Fastify's own two request log
 * lines are turned off in app.ts): method, route pattern, status and duration. The fast path
 * writes the same line for the requests it answers (fast-path/early-answers.ts).
 */
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

export function registerRequestLog(app: FastifyInstance): void {
  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onRequest', async (request, reply) => {
        reply.header('x-request-id', request.id);
      });
      instance.addHook('onResponse', async (request, reply) => {
        request.log.info(
          {
            method: request.method,
            route: request.routeOptions.url ?? '(unmatched)',
            status: reply.statusCode,
            durationMs: Math.round(reply.elapsedTime * 100) / 100,
          },
          'request',
        );
      });
    }),
  );
}

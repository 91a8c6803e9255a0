import type { App, RouteContext } from '../app-types.js';
import { AppError, RETRY_AFTER_SECONDS } from '../problems.js';

export function registerHealthRoutes(app: App, { store }: RouteContext): void {
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    return reply.header('cache-control', 'no-store').send({ status: 'ok' });
  });
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await store.ping();
    } catch {
      throw new AppError('service-unavailable', 'The database is not reachable, or the search workers are still starting.', {
        headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      });
    }
    return reply.header('cache-control', 'no-store').send({ status: 'ready' });
  });
}

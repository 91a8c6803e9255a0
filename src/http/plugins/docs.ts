/**
 * /docs: the interactive API reference (Swagger UI from @fastify/swagger-ui). Every asset is served
 * by this service from node_modules, so the page works offline and behind a firewall; it reads
 * /openapi.json, the same document agents fetch.
 */
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { NotFoundError } from '../problems.js';

export const DOCS_PREFIX = '/docs';

/**
 * The Content-Security-Policy of every /docs response. Swagger UI needs its own scripts and
 * stylesheets ('self'), inline style attributes set by React, data: images (its SVG icons), and
 * fetch access to this origin and PUBLIC_BASE_URL's (the spec and "Try it out"). Nothing else:
 * no eval, no third-party origin, no framing by other sites.
 */
export function docsContentSecurityPolicy(config: Config): string {
  const apiOrigin = new URL(config.publicBaseUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self' ${apiOrigin}`,
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
    "object-src 'none'",
  ].join('; ');
}

/** Registers /docs in its own encapsulated context, so its CSP hook touches /docs responses only. */
export async function registerDocs(app: FastifyInstance, config: Config): Promise<void> {
  const csp = docsContentSecurityPolicy(config);
  await app.register(async (docs) => {
    // onSend runs after any onRequest hook that set a stricter API-wide policy, so this one wins for /docs.
    docs.addHook('onSend', async (_request, reply, payload) => {
      reply.header('content-security-policy', csp);
      return payload;
    });
    await docs.register(swaggerUi, {
      routePrefix: DOCS_PREFIX,
      uiConfig: {
        deepLinking: true,
        docExpansion: 'list',
        defaultModelsExpandDepth: 1,
        displayRequestDuration: true,
        supportedSubmitMethods: ['get', 'head'],
        // The top bar's "Explore" box would invite loading other documents; this page shows ours.
        layout: 'BaseLayout',
      },
      theme: { title: 'Restaurant Guides API reference' },
      validatorUrl: false,
      uiHooks: {
        onRequest: async (request, reply) => {
          const route = request.routeOptions.url;
          // Swagger UI fetches ./json; point it at the one published document instead of a second copy.
          if (route === `${DOCS_PREFIX}/json`) return reply.redirect('../openapi.json', 302);
          if (route === `${DOCS_PREFIX}/yaml`) throw new NotFoundError();
          return undefined;
        },
      },
    });
  });
}

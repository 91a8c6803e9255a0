/**
 * /docs: the interactive API reference (Swagger UI from @fastify/swagger-ui). Every asset is served
 * by this service from node_modules, so the page works offline and behind a firewall; it reads
 * /openapi.json, the same document agents fetch.
 */
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { NotFoundError } from '../problems.js';
import { representationHash } from '../../representation/representation.js';
import { ifNoneMatchHits } from '../cache/conditional.js';
import { hooksOf } from './hooks-of.js';

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

/** The path of PUBLIC_BASE_URL without its trailing slash: '' at the root, '/guides-api' under a prefix. */
function pathPrefix(config: Config): string {
  return new URL(config.publicBaseUrl).pathname.replace(/\/+$/, '');
}

/** Files served from node_modules whose strong tag is remembered (by path, file version and coding); more start over. */
const MAX_REMEMBERED_FILES = 256;

type Stream = AsyncIterable<Buffer | string> & { destroy(): void };

/** A stream payload: a file's (node:stream) or @fastify/compress's (readable-stream, not a node:stream instance). */
function isStream(payload: unknown): payload is Stream {
  return typeof (payload as { pipe?: unknown } | null)?.pipe === 'function';
}

async function readAll(stream: Stream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/**
 * onSend for every /docs 200, after compression: a strong ETag of the bytes sent (@fastify/static
 * gives files a weak one, the page and its initializer have none), and 304 on If-None-Match. A
 * file's tag is computed once per version (its weak validator) and coding; the page is hashed each
 * time, it is small.
 */
function createStrongEtags(): (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown> {
  const fileTags = new Map<string, string>();
  return async (request, reply, payload) => {
    if (reply.statusCode !== 200) return payload;
    const weak = reply.getHeader('etag');
    const fileKey =
      typeof weak === 'string' && isStream(payload)
        ? `${request.url.split('?')[0]} ${weak} ${String(reply.getHeader('content-encoding') ?? '')}`
        : undefined;
    let body: unknown = payload;
    let etag = fileKey === undefined ? undefined : fileTags.get(fileKey);
    if (etag === undefined) {
      if (isStream(payload)) body = await readAll(payload);
      if (typeof body === 'string') body = Buffer.from(body);
      if (!Buffer.isBuffer(body)) return payload;
      etag = `"${representationHash(body)}"`;
      if (fileKey !== undefined) {
        if (fileTags.size >= MAX_REMEMBERED_FILES) fileTags.clear();
        fileTags.set(fileKey, etag);
      }
    }
    reply.header('etag', etag);
    if (!ifNoneMatchHits(request.headers['if-none-match'], etag)) return body;
    if (isStream(body)) body.destroy();
    reply.code(304).removeHeader('content-length');
    return null;
  };
}

/** Registers /docs in its own encapsulated context, so its CSP hook touches /docs responses only. */
export async function registerDocs(app: FastifyInstance, config: Config): Promise<void> {
  const csp = docsContentSecurityPolicy(config);
  const strongEtags = createStrongEtags();
  await app.register(async (docs) => {
    // Last of each route's onSend hooks (after compression.ts's), so the tag is of the bytes sent.
    docs.addHook('onRoute', (route) => {
      route.onSend = [...hooksOf(route.onSend), strongEtags];
    });
    // onSend runs after any onRequest hook that set a stricter API-wide policy, so this one wins for /docs.
    docs.addHook('onSend', async (_request, reply, payload) => {
      reply.header('content-security-policy', csp);
      return payload;
    });
    await docs.register(swaggerUi, {
      routePrefix: DOCS_PREFIX,
      // Behind a proxy serving the API under PUBLIC_BASE_URL's path, the page's asset links need that path too.
      indexPrefix: pathPrefix(config),
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

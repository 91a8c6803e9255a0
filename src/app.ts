/**
 * buildApp: the whole HTTP service as a Fastify instance, given its config and store. No I/O
 * happens here; the store is read on ready (content version) and per request.
 */
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import { createCursorCodec } from './guides/cursor.js';
import type { CursorCodec } from './guides/cursor.js';
import type { SearchPageRenderer } from './representation/rendered-page.js';
import type { GuideStore } from './store/guide-store.js';
import type { App, RouteContext } from './http/app-types.js';
import { createRepresentationCache } from './http/cache/representation-cache.js';
import { registerCompression } from './http/plugins/compression.js';
import { registerContentVersion } from './http/plugins/content-version.js';
import { registerEarlyAnswers } from './http/fast-path/early-answers.js';
import { hardenedServerOptions, measureConnectionErrors, registerHardening, registerUrlCap } from './http/plugins/hardening.js';
import type { ClientErrorCounter } from './http/plugins/hardening.js';
import { createLazySerializers } from './http/plugins/lazy-serializers.js';
import { registerLoadShedding } from './http/plugins/load-shedding.js';
import { registerMethodRule } from './http/plugins/method-rule.js';
import { createMetricsTable, registerMetrics } from './http/plugins/metrics.js';
import { registerRateLimit } from './http/plugins/rate-limit.js';
import { registerRequestLog } from './http/plugins/request-log.js';
import { registerSearchBudget } from './http/plugins/search-budget.js';
import { requestIdFor } from './http/request-id.js';
import { registerDocs } from './http/plugins/docs.js';
import { addSharedSchemas, openApiOptions, registerOpenApiRoute } from './http/plugins/openapi.js';
import { installProblemHandlers } from './http/problems.js';
import { registerDiscoveryRoutes } from './http/routes/discovery.js';
import { registerGuideRoutes } from './http/routes/guides.js';
import { registerHealthRoutes } from './http/routes/health.js';
import { MCP_CORS_ALLOWED_HEADERS, MCP_CORS_EXPOSED_HEADERS, MCP_PATH, registerMcpRoutes } from './http/routes/mcp.js';
import { registerProductRoutes } from './http/routes/product.js';
import { registerResourceRoutes } from './http/routes/resources.js';
import { registerRootRoute } from './http/routes/root.js';

export interface BuildAppOptions {
  config: Config;
  store: GuideStore;
  /** Offered next to the store by a backend that renders search pages where it searches (store/open-store.ts). */
  searchPages?: SearchPageRenderer;
  /** A pino logger (or false for none); default: pino at config.logLevel on stdout. */
  logger?: FastifyBaseLogger | false;
}

export const EXPOSED_HEADERS = [
  'ETag',
  'Link',
  'RateLimit',
  'RateLimit-Policy',
  'X-Request-Id',
  'Retry-After',
  'Last-Modified',
  'X-Markdown-Tokens',
];

/** Longest path the router is given; longer ones (and undecodable ones) name nothing. */
const MAX_ROUTABLE_PATH = 512;
const UNROUTABLE_PATH = '/.unroutable';

/**
 * Sends paths that the router would reject before any hook runs (bad percent-encoding, segments
 * over maxParamLength) to a path with no route, so they get the ordinary 404 with every header.
 */
function rewriteUnroutable(request: { url?: string }): string {
  const url = request.url ?? '/';
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  if (path.length > MAX_ROUTABLE_PATH) return UNROUTABLE_PATH;
  if (path.includes('%')) {
    try {
      decodeURIComponent(path);
    } catch {
      return UNROUTABLE_PATH;
    }
  }
  return url;
}

export function buildApp({ config, store, searchPages, logger }: BuildAppOptions): App {
  const loggerOptions: Pick<FastifyServerOptions, 'logger' | 'loggerInstance'> =
    logger === false
      ? { logger: false }
      : logger
        ? { loggerInstance: logger }
        : { logger: { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] } };

  const connections: ClientErrorCounter = { clientErrors: {} };
  const serializers = createLazySerializers();
  const app = Fastify({
    ...loggerOptions,
    // Timeouts, header cap, trusted proxies, problem+json on connection-level errors.
    ...hardenedServerOptions(config, connections),
    // One log line per request is written by our onResponse hook instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    requestIdHeader: false,
    genReqId: (request) => requestIdFor(request.headers),
    routerOptions: { maxParamLength: MAX_ROUTABLE_PATH, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false },
    // validateSchema: false skips checking our own schemas against JSON Schema's meta-schema at every
    // start (compiling the meta-schema is a noticeable part of it); the OpenAPI tests check them in CI.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: true, validateSchema: false } },
    rewriteUrl: rewriteUnroutable,
    // Response serializers compile on first use or right after listening, not before (a faster start).
    schemaController: { compilersFactory: { buildSerializer: serializers.buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>() as App;

  serializers.compileAfterListen(app);

  // Each component adds what it measures as it is made; /metrics lists them in that order.
  const metrics = createMetricsTable();
  const cache = createRepresentationCache({
    maxEntries: 10_000,
    // RESPONSE_CACHE_MB: one-off requests (distinct searches, cursors, a crawler's reads) are not
    // kept at all, so they neither churn the cache nor evict hot pages (docs/operations.md, Memory).
    maxBytes: config.responseCacheMb * 1024 * 1024,
    admitOnSecondMiss: true,
    cacheControl: `public, max-age=${config.cacheMaxAgeSeconds}, stale-while-revalidate=${config.cacheStaleWhileRevalidateSeconds}`,
    currentVersion: () => contentVersion(),
    metrics,
  });

  let codecPromise: Promise<CursorCodec> | undefined;
  const cursorCodec = (): Promise<CursorCodec> => {
    codecPromise ??= (async () => {
      const keys =
        config.cursorSecrets.length > 0 ? config.cursorSecrets.map((secret) => Buffer.from(secret, 'utf8')) : [await store.cursorKey()];
      return createCursorCodec(keys);
    })().catch((error: unknown) => {
      codecPromise = undefined;
      throw error;
    });
    return codecPromise;
  };

  const contentVersion = registerContentVersion(app, {
    store,
    pollMs: config.contentPollMs,
    onChange: () => {
      cache.clear();
      // A key kept in the database is read again: the file may have been replaced by another one
      // (a restored backup, a copied database), whose cursors are signed with its own key.
      if (config.cursorSecrets.length === 0) codecPromise = undefined;
    },
  });
  registerRequestLog(app);

  installProblemHandlers(app, { baseUrl: config.publicBaseUrl });
  const apiCors = {
    origin: '*',
    methods: ['GET', 'HEAD', 'OPTIONS'],
    exposedHeaders: EXPOSED_HEADERS,
    strictPreflight: false,
    maxAge: 86_400,
  };
  // Browser MCP clients POST JSON with the MCP headers, and read the protocol version and limits back.
  const mcpCors = {
    ...apiCors,
    methods: ['POST', 'OPTIONS'],
    allowedHeaders: MCP_CORS_ALLOWED_HEADERS,
    exposedHeaders: MCP_CORS_EXPOSED_HEADERS,
  };
  app.register(cors, {
    delegator: (request, callback) => callback(null, request.url === MCP_PATH ? mcpCors : apiCors),
  });
  // Each registers application-wide hooks, in this order, after CORS (so 414/429/503 keep CORS headers).
  registerHardening(app, config);
  const rateLimit = registerRateLimit(app, { config, metrics });
  registerUrlCap(app, config);
  registerMethodRule(app);
  const loadShedding = registerLoadShedding(app, config, metrics);
  const searchBudget = registerSearchBudget(app, config, metrics);
  measureConnectionErrors(metrics, connections);
  registerCompression(app);
  const observe = registerMetrics(app, metrics);
  // Outermost: a cache hit is answered before Fastify looks at the request (a cached search costs no search).
  if (config.fastPath) registerEarlyAnswers(app, { config, cache, rateLimit, loadShedding, observe, log: app.log });
  app.register(swagger, openApiOptions(config));

  // The routes search through the search budget's queue.
  const context: RouteContext = { config, ...searchBudget.queueSearches({ store, searchPages }), cache, cursorCodec };
  // Registered after swagger so that its onRoute hook sees every route.
  app.register(async (instance) => {
    const routes = instance as App;
    addSharedSchemas(routes);
    registerRootRoute(routes, context);
    registerProductRoutes(routes, context);
    registerGuideRoutes(routes, context);
    registerResourceRoutes(routes, context);
    registerOpenApiRoute(routes, context);
    registerDiscoveryRoutes(routes, context);
    registerHealthRoutes(routes, context);
    registerMcpRoutes(routes, context);
  });
  app.register(async (instance) => registerDocs(instance, config));
  return app;
}

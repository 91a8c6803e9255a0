/**
 * The MCP endpoint's handler, on the official SDK: createMcpHandler builds a fresh McpServer for
 * every HTTP request and keeps nothing between requests, so any instance answers any request. It
 * speaks 2026-07-28 (JSON responses, no sessions) and, for older clients, the 2025 revisions
 * statelessly (no Mcp-Session-Id; answered as the SDK does).
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { CacheHint, McpHttpHandler, McpServerOptions } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import type { RouteContext } from '../http/app-types.js';
import { SOFTWARE_VERSION } from '../lib/version.js';
import { guideResourceRegistrar } from './guide-resources.js';
import { guideToolRegistrar } from './guide-tools.js';

const INSTRUCTIONS =
  'Restaurant guides, public and read-only. Find guides with search_guides (or list_guides), ' +
  "then read one with get_guide; cite the guide's url.";

/** The tool list changes only with a new release; guide lists and documents as often as REST's max-age allows. */
const ONE_HOUR_MS = 3_600_000;

export function createGuidesMcpHandler(context: RouteContext, log: FastifyBaseLogger): McpHttpHandler {
  const content: CacheHint = { ttlMs: context.config.cacheMaxAgeSeconds * 1000, cacheScope: 'public' };
  const release: CacheHint = { ttlMs: ONE_HOUR_MS, cacheScope: 'public' };
  // Everything that does not depend on the request is made here, once; the factory only builds
  // the McpServer (one per request, as the SDK requires) and registers it all on it.
  const info = { name: 'restaurant-guides', title: 'Restaurant Guides', version: SOFTWARE_VERSION };
  const options: McpServerOptions = {
    instructions: INSTRUCTIONS,
    // Nothing is ever notified: the tools change only with a release, and a stateless instance
    // cannot tell the other instances' clients about an import.
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
    cacheHints: {
      'server/discover': release,
      'tools/list': release,
      'resources/templates/list': release,
      'resources/list': content,
      'resources/read': content,
    },
  };
  const registerTools = guideToolRegistrar(context, log);
  const registerResources = guideResourceRegistrar(context);
  const factory = (): McpServer => {
    const server = new McpServer(info, options);
    registerTools(server);
    registerResources(server);
    return server;
  };
  return createMcpHandler(factory, {
    // 'auto' answers one JSON body unless a handler emits a notification before its result, which
    // ours never do (test/http/routes/mcp-http.test.ts checks it). 'json' would say the same with a
    // console.warn on stderr each time a handler is built, outside the JSON log lines.
    responseMode: 'auto',
    onerror: (error) => log.debug({ err: error }, 'MCP request rejected'),
  });
}

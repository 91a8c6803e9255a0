/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP (src/mcp/ has the tools and resources).
 *
 * Everything in front of the SDK is the REST API's own: request id, rate limit (429 problem),
 * security headers, CORS, load shedding and the request log line. Then the reply is hijacked and the
 * SDK's Node adapter writes the JSON-RPC answer itself, so no onSend hook (ETag, caching,
 * compression) touches it; the headers the hooks set so far are copied onto it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { localhostAllowedHostnames, validateHostHeader } from '@modelcontextprotocol/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { createGuidesMcpHandler } from '../../mcp/guides-mcp-handler.js';
import type { App, RouteContext } from '../app-types.js';
import { AppError, MCP_METHOD_NOT_ALLOWED_DETAIL, PROBLEM_TYPES } from '../problems.js';
import { HEADERS, problemExample, problemResponse } from '../openapi/responses.js';

export const MCP_PATH = '/mcp';
/** One JSON-RPC message; tool arguments are short (a query is at most MAX_QUERY_LENGTH characters). */
export const MCP_BODY_LIMIT_BYTES = 64 * 1024;

/** The request headers a browser client sends to /mcp, and the response headers it may read. */
export const MCP_CORS_ALLOWED_HEADERS = [
  'Content-Type',
  'Accept',
  'MCP-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'Mcp-Session-Id',
  'Last-Event-ID',
];
export const MCP_CORS_EXPOSED_HEADERS = ['MCP-Protocol-Version', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id'];

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '::1', 'localhost', '[::1]']);

/** True when HOST is a loopback address: then a Host header that is not a loopback name is DNS rebinding. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function jsonRpcError(message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/** The SDK makes the request's URL from Host: one that is no host name (`a b`, a port past 65535) is a 400, not its 500. */
function isUsableHost(host: string | undefined): boolean {
  if (host === undefined) return true;
  try {
    return new URL(`http://${host}/`).host !== '';
  } catch {
    return false;
  }
}

/** Why the request may not reach the SDK (a 403), or undefined. */
function refusal(config: Config, headers: IncomingHttpHeaders): string | undefined {
  if (isLoopbackHost(config.host)) {
    const host = validateHostHeader(headers.host, localhostAllowedHostnames());
    if (!host.ok) return 'Forbidden: this server listens on a loopback address and answers loopback host names only.';
  }
  const origin = headers.origin;
  if (origin !== undefined && config.mcpAllowedOrigins.length > 0) {
    let normalized: string | undefined;
    try {
      normalized = new URL(origin).origin;
    } catch {
      normalized = undefined;
    }
    if (normalized === undefined || !config.mcpAllowedOrigins.includes(normalized))
      return 'Forbidden: this Origin is not allowed (MCP_ALLOWED_ORIGINS).';
  }
  return undefined;
}

/** The body Fastify read (within the body limit), replayed to the SDK's adapter as the request stream. */
function nodeRequest(request: FastifyRequest): Parameters<ReturnType<typeof toNodeHandler>>[0] {
  const body = request.body;
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    async *[Symbol.asyncIterator]() {
      if (Buffer.isBuffer(body) && body.length > 0) yield body;
    },
  };
}

/**
 * The body as JSON when it parses, handed to the SDK so that it neither reads nor parses it again;
 * undefined otherwise, and the SDK reads the bytes itself and answers its own parse error.
 */
function parsedJson(body: unknown): unknown {
  if (!Buffer.isBuffer(body) || body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Writes the headers our hooks set (request id, CORS, rate limit, security) onto the raw response. */
function copyHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value as string | number | readonly string[]);
  }
}

const JsonRpcMessageSchema = {
  type: 'object',
  description: 'A JSON-RPC 2.0 message as the Model Context Protocol defines it (https://modelcontextprotocol.io/specification).',
  required: ['jsonrpc'],
  properties: { jsonrpc: { type: 'string', enum: ['2.0'] } },
  additionalProperties: true,
} as const;

function jsonRpcResponse(description: string, example: unknown) {
  return {
    description,
    headers: { 'X-Request-Id': HEADERS['X-Request-Id'], RateLimit: HEADERS.RateLimit, 'RateLimit-Policy': HEADERS['RateLimit-Policy'] },
    content: {
      'application/json': {
        schema: JsonRpcMessageSchema,
        examples: { sample: { summary: description.split('.')[0] ?? description, value: example } },
      },
    },
  };
}

/** A JSON-RPC response that may also be a problem (our own refusals before the SDK). */
function withProblem(response: ReturnType<typeof jsonRpcResponse>, problem: ReturnType<typeof problemResponse>) {
  return { ...response, headers: { ...response.headers, ...problem.headers }, content: { ...response.content, ...problem.content } };
}

function mcpResponses(base: string): Record<string, unknown> {
  const rateLimited = problemResponse(
    'This client (by IP address) has spent its request budget, shared with the REST API (`rate-limited`). Wait Retry-After seconds.',
    {
      rateLimited: problemExample(
        base,
        'rate-limited',
        'The per-client budget is spent',
        'This client sent more than 600 requests this minute. Retry after the number of seconds in Retry-After.',
      ),
    },
    ['Retry-After'],
  );
  const methodNotAllowed = problemResponse(
    'GET, HEAD and DELETE on /mcp: the endpoint keeps no sessions, so it offers no event stream and nothing to delete.',
    { methodNotAllowed: problemExample(base, 'method-not-allowed', 'A GET or DELETE', MCP_METHOD_NOT_ALLOWED_DETAIL) },
  );
  return {
    200: {
      description:
        'The JSON-RPC response. 2026-07-28 requests are answered as `application/json`; 2025-era requests as the SDK answers them: an event stream carrying the one response.',
      headers: { 'X-Request-Id': HEADERS['X-Request-Id'], RateLimit: HEADERS.RateLimit, 'RateLimit-Policy': HEADERS['RateLimit-Policy'] },
      content: {
        'application/json': {
          schema: JsonRpcMessageSchema,
          examples: { toolsList: { summary: 'A result', value: { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', tools: [] } } } },
        },
        'text/event-stream': {
          schema: { type: 'string', description: 'Server-sent events, one `message` event per JSON-RPC message.' },
          examples: { stream: { summary: 'One response', value: 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n' } },
        },
      },
    },
    202: { description: 'A notification (or response) was accepted; there is no body.', type: 'null' },
    400: withProblem(
      jsonRpcResponse(
        'A message the protocol refuses (malformed JSON-RPC, a header that disagrees with the body, an unsupported protocol version), ' +
          'or, as a `bad-request` problem, an HTTP request that cannot be understood (a Host header that names no host).',
        {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'], requested: '1999-01-01' } },
        },
      ),
      problemResponse('', {
        badHost: problemExample(base, 'bad-request', 'A Host header that names no host', 'The Host header is not a valid host name.'),
      }),
    ),
    403: jsonRpcResponse(
      'Refused: an Origin outside MCP_ALLOWED_ORIGINS, or, while the server listens on a loopback address, a Host that is not a loopback name.',
      { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: this Origin is not allowed (MCP_ALLOWED_ORIGINS).' } },
    ),
    404: jsonRpcResponse('An unknown method (2026-07-28).', {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'Method not found' },
    }),
    405: {
      ...methodNotAllowed,
      headers: {
        ...methodNotAllowed.headers,
        Allow: { ...HEADERS.Allow, description: 'The methods /mcp accepts.', enum: ['POST, OPTIONS'] },
      },
    },
    406: jsonRpcResponse('The Accept header does not list both `application/json` and `text/event-stream`.', {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' },
    }),
    413: problemResponse(`The body is over ${MCP_BODY_LIMIT_BYTES / 1024} KiB (\`payload-too-large\`).`, {
      payloadTooLarge: problemExample(base, 'payload-too-large', 'An oversized body', PROBLEM_TYPES['payload-too-large'].about),
    }),
    415: jsonRpcResponse('The Content-Type is not `application/json`.', {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' },
    }),
    429: rateLimited,
    500: jsonRpcResponse('The server failed unexpectedly.', {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32603, message: 'Internal server error' },
    }),
    503: problemResponse(
      'The server is overloaded (`service-unavailable`). Retry after Retry-After seconds.',
      {
        overloaded: problemExample(
          base,
          'service-unavailable',
          'The server sheds load',
          'The server is overloaded right now. Retry after the number of seconds in Retry-After.',
        ),
      },
      ['Retry-After'],
    ),
  };
}

export function registerMcpRoutes(app: App, context: RouteContext): void {
  const { config } = context;
  const handle = toNodeHandler(createGuidesMcpHandler(context, app.log), {
    onerror: (error) => app.log.error({ err: error }, 'MCP adapter failed'),
  });

  app.register(async (instance) => {
    // The SDK reads the body itself (its own JSON-RPC errors for bad JSON or a wrong Content-Type);
    // Fastify only collects the bytes, within the body limit (413 problem past it).
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    instance.post(
      MCP_PATH,
      {
        bodyLimit: MCP_BODY_LIMIT_BYTES,
        schema: {
          operationId: 'mcp',
          summary: 'Model Context Protocol endpoint (Streamable HTTP, stateless)',
          description:
            'One JSON-RPC message per POST: revision 2026-07-28 (`server/discover`, no sessions) and the 2025 revisions ' +
            '(`initialize`, without a session id). Tools: search_guides, list_guides, get_guide; resources: every published ' +
            'guide as `{base}/api/v1/guides/{slug}.md`. Same rate limits as the REST API. See docs/agents.md.',
          tags: ['mcp'],
          body: JsonRpcMessageSchema,
          response: mcpResponses(config.publicBaseUrl),
        },
        // The SDK validates the message; Fastify only documents it.
        validatorCompiler: () => () => true,
      },
      async (request, reply) => {
        if (!isUsableHost(request.headers.host)) throw new AppError('bad-request', 'The Host header is not a valid host name.');
        reply.hijack();
        copyHeaders(reply);
        const refused = refusal(config, request.headers);
        if (refused !== undefined) {
          reply.raw.writeHead(403, { 'content-type': 'application/json' });
          reply.raw.end(jsonRpcError(refused));
          return;
        }
        await handle(nodeRequest(request), reply.raw, parsedJson(request.body));
      },
    );
  });
}

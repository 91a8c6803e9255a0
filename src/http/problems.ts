/**
 * Problem types (RFC 9457) and the one error handler that turns every failure into
 * application/problem+json. 5xx bodies are generic; details go to the log with the request id.
 * No user-supplied value is ever echoed into a problem.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_LIMIT, MAX_QUERY_LENGTH } from '../guides/limits.js';
import { StoreUnavailableError } from '../store/guide-store.js';

export const PROBLEM_TYPES = {
  'invalid-parameter': {
    status: 400,
    title: 'Invalid parameter',
    about: 'A query parameter is malformed, out of range, repeated or unknown.',
    advice: 'Read `errors`: each entry names the parameter and what it must be. Fix the request; do not retry it unchanged.',
  },
  'invalid-cursor': {
    status: 400,
    title: 'Invalid cursor',
    about: 'The `cursor` was altered, truncated, made by another deployment, or belongs to a different search.',
    advice: 'Pass `nextCursor` back exactly as received, with the same `q` or none. Restart from the first page if the walk is lost.',
  },
  'bad-request': {
    status: 400,
    title: 'Bad request',
    about: 'The HTTP request itself could not be understood.',
    advice: 'Send a well-formed HTTP/1.1 request with a valid URL.',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    about: 'No published guide or API route has this URL.',
    advice: 'Check the slug against GET /api/v1/guides. Unpublished and unknown guides look the same on purpose.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    about: 'This API is read-only.',
    advice: 'Use GET or HEAD (or OPTIONS for CORS preflight); see the Allow header.',
  },
  'request-timeout': {
    status: 408,
    title: 'Request timeout',
    about: 'The client did not send a complete request in time; the connection is closed.',
    advice: 'Send the whole request at once; slow or stalled uploads of headers are cut off.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    about: 'The request body is larger than this server accepts.',
    advice: 'Send one JSON-RPC message of at most 64 KiB to POST /mcp.',
  },
  'uri-too-long': {
    status: 414,
    title: 'URI too long',
    about: 'The request URL is longer than this server accepts.',
    advice: `Shorten the query: \`q\` is at most ${MAX_QUERY_LENGTH} characters and cursors are short.`,
  },
  'rate-limited': {
    status: 429,
    title: 'Too many requests',
    about:
      'This client has used its request budget for the current window, or already has the most searches in flight that one client may have.',
    advice:
      'Wait the number of seconds in Retry-After (or for the answers to your searches); the RateLimit header shows the remaining budget.',
  },
  'request-header-fields-too-large': {
    status: 431,
    title: 'Request header fields too large',
    about: 'The request headers are larger than this server accepts.',
    advice: 'Send fewer or smaller headers.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal error',
    about: 'The server failed unexpectedly. The failure was logged with the request id.',
    advice: 'Retry later; report the X-Request-Id if it persists.',
  },
  'service-unavailable': {
    status: 503,
    title: 'Service unavailable',
    about: 'The server is overloaded or cannot reach its database right now.',
    advice: 'Retry after the number of seconds in Retry-After.',
  },
} as const;

export type ProblemName = keyof typeof PROBLEM_TYPES;

export interface ParameterError {
  in: 'query' | 'path' | 'header';
  name: string;
  detail: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: ParameterError[];
}

/** A failure a handler reports on purpose; the error handler renders it as a problem. */
export class AppError extends Error {
  readonly problem: ProblemName;
  readonly detail: string;
  readonly errors?: ParameterError[];
  readonly headers: Readonly<Record<string, string>>;

  constructor(problem: ProblemName, detail: string, options: { errors?: ParameterError[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.name = 'AppError';
    this.problem = problem;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export class NotFoundError extends AppError {
  constructor() {
    super('not-found', NOT_FOUND_DETAIL);
  }
}

export class InvalidParameterError extends AppError {
  constructor(errors: ParameterError[]) {
    super('invalid-parameter', 'One or more query parameters are invalid; see errors.', { errors });
  }
}

export class InvalidCursorError extends AppError {
  constructor(detail = 'The cursor is not one this API issued, or it was changed. Pass nextCursor back unchanged.') {
    super('invalid-cursor', detail);
  }
}

export const MCP_METHOD_NOT_ALLOWED_DETAIL =
  'The MCP endpoint takes POST only: it keeps no sessions, so there is no GET stream and nothing to DELETE.';
export const NOT_FOUND_DETAIL = 'There is no published guide or API resource at this URL.';
export const RETRY_AFTER_SECONDS = 5;

export function problemBody(baseUrl: string, name: ProblemName, detail: string, errors?: ParameterError[]): ProblemBody {
  const type = PROBLEM_TYPES[name];
  return { type: `${baseUrl}/problems/${name}`, title: type.title, status: type.status, detail, ...(errors ? { errors } : {}) };
}

export function sendProblem(reply: FastifyReply, body: ProblemBody, headers: Readonly<Record<string, string>> = {}): FastifyReply {
  return reply
    .code(body.status)
    .headers({ 'content-type': 'application/problem+json; charset=utf-8', 'cache-control': 'no-store', ...headers })
    .send(JSON.stringify(body));
}

/** The query parameters the matched route's schema declares, for telling clients what they may send. */
function acceptedParameters(request: FastifyRequest): string {
  const schema = request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
  const names = Object.keys(schema?.properties ?? {});
  return names.length > 0 ? names.join(', ') : '(none)';
}

const PARAMETER_RULES: Record<string, string> = {
  q: `must be at most ${MAX_QUERY_LENGTH} characters after trimming, without control characters`,
  limit: `must be an integer from 1 to ${MAX_LIMIT}, written in plain decimal digits`,
  cursor: 'must be a nextCursor value from an earlier page',
};

/**
 * A parameter name echoed as sent: letters, marks and digits of any script and ASCII punctuation,
 * but nothing that could open markup or an attribute (< > & " ' ` \\), no space, no control or
 * invisible character. Anything else is named "(unprintable name)".
 */
const SAFE_NAME = /^(?:[\p{L}\p{M}\p{N}]|[!#$%()*+,\-./:;=?@[\]^_{|}~])+$/u;
const SAFE_NAME_MAX_LENGTH = 64;

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/** Fastify/Ajv query validation errors → one entry per parameter, named but never quoted by value. */
function toParameterErrors(request: FastifyRequest, validation: readonly AjvError[]): ParameterError[] {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const byName = new Map<string, ParameterError>();
  for (const error of validation) {
    if (error.keyword === 'additionalProperty' || error.keyword === 'additionalProperties') {
      const raw = String(error.params.additionalProperty ?? '');
      const name = raw.length <= SAFE_NAME_MAX_LENGTH && SAFE_NAME.test(raw) ? raw : '(unprintable name)';
      byName.set(`unknown:${name}`, {
        in: 'query',
        name,
        detail: `is not a parameter of this operation; accepted parameters: ${acceptedParameters(request)}`,
      });
      continue;
    }
    const name = error.instancePath.replace(/^\//, '').split('/')[0] ?? '';
    if (byName.has(name)) continue;
    const detail = Array.isArray(query[name]) ? 'is repeated; send it once' : (PARAMETER_RULES[name] ?? 'is invalid');
    byName.set(name, { in: 'query', name, detail });
  }
  return [...byName.values()];
}

export interface ErrorHandlingOptions {
  baseUrl: string;
}

/** Installs the error and not-found handlers. Every response that is not a success goes through here. */
export function installProblemHandlers(app: FastifyInstance, { baseUrl }: ErrorHandlingOptions): void {
  const notFoundBody = problemBody(baseUrl, 'not-found', NOT_FOUND_DETAIL);
  // Methods are refused before this (plugins/method-rule.ts): what gets here is not found.
  app.setNotFoundHandler((_request, reply) => sendProblem(reply, notFoundBody));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      if (error.problem === 'not-found') return sendProblem(reply, notFoundBody, error.headers);
      return sendProblem(reply, problemBody(baseUrl, error.problem, error.detail, error.errors), error.headers);
    }
    if (error.validation) {
      // A path parameter that fails its schema (a malformed slug) is just another unknown guide.
      if (error.validationContext === 'params') return sendProblem(reply, notFoundBody);
      const errors = toParameterErrors(request, error.validation as unknown as AjvError[]);
      return sendProblem(reply, problemBody(baseUrl, 'invalid-parameter', 'One or more query parameters are invalid; see errors.', errors));
    }
    if (error instanceof StoreUnavailableError) {
      request.log.error({ err: error }, 'database unavailable');
      return sendProblem(
        reply,
        problemBody(baseUrl, 'service-unavailable', 'The service cannot reach its database right now. Retry shortly.'),
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      );
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      request.log.info({ err: error }, 'client error');
      const name: ProblemName =
        status === 413
          ? 'payload-too-large'
          : status === 414
            ? 'uri-too-long'
            : status === 431
              ? 'request-header-fields-too-large'
              : 'bad-request';
      return sendProblem(reply, problemBody(baseUrl, name, PROBLEM_TYPES[name].about));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(
      reply,
      problemBody(baseUrl, 'internal-error', 'The server failed unexpectedly. The failure was logged with this request id.'),
    );
  });
}

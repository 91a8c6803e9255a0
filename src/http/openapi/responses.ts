/**
 * The responses every operation declares, beyond its 200 body: conditional 304, the problem
 * responses (all pointing at the shared Problem schema) and the headers each one carries. Route
 * schemas spread these into `response`, so the same objects feed Fastify and /openapi.json.
 */
import type { TSchema } from 'typebox';
import { NOT_FOUND_DETAIL, PROBLEM_TYPES, problemBody, RETRY_AFTER_SECONDS } from '../problems.js';
import type { ProblemName } from '../problems.js';
import { refTo } from '../../schemas/common.js';
import { ProblemRef } from '../../schemas/problem.js';

export interface HeaderSchema {
  type: 'string' | 'integer';
  description: string;
  pattern?: string;
  minimum?: number;
  enum?: readonly (string | number)[];
  examples?: readonly (string | number)[];
}

/** Response headers as @fastify/swagger expects them: a schema with a description each. */
export const HEADERS = {
  'X-Request-Id': {
    type: 'string',
    description:
      'Identifies this request in the server logs: the X-Request-Id the client sent when it is 1–128 letters, digits or `._:-`, else a generated UUID. Quote it when reporting a problem.',
    pattern: '^[A-Za-z0-9._:-]{1,128}$',
    examples: ['0b6f3f0e-6a53-4a53-9d8e-2f4b8f3f7c21'],
  },
  RateLimit: {
    type: 'string',
    description:
      'What is left of this client\'s request budget in the current window (IETF draft-ietf-httpapi-ratelimit-headers, Structured Fields): `r` requests remain, the window resets in `t` seconds. A search refused because this client has too many searches in flight adds a `"searches-in-flight";r=0;t=1` item.',
    pattern: '^"[a-z0-9-]+";r=[0-9]+;t=[0-9]+(, "[a-z0-9-]+";r=[0-9]+;t=[0-9]+)*$',
    examples: ['"per-ip";r=599;t=54'],
  },
  'RateLimit-Policy': {
    type: 'string',
    description:
      'The request budget per client IP: `q` requests per `w` seconds (RATE_LIMIT_PER_MINUTE, default 600 a minute). A search refused because this client has too many searches in flight adds the `"searches-in-flight";q=4;qu="concurrent-requests"` item: at most `q` searches at once (SEARCH_CONCURRENCY_PER_CLIENT).',
    pattern: '^"[a-z0-9-]+";q=[0-9]+(;w=[0-9]+|;qu="concurrent-requests")(, "[a-z0-9-]+";q=[0-9]+(;w=[0-9]+|;qu="concurrent-requests"))*$',
    examples: ['"per-ip";q=600;w=60'],
  },
  ETag: {
    type: 'string',
    description:
      'Strong entity tag of this representation, the same on every instance. Send it back in If-None-Match to get a 304 while the content is unchanged.',
    pattern: '^"[A-Za-z0-9_-]+"$',
    examples: ['"7jgI-y4nfFr03iiZUOKm2w"'],
  },
  'Last-Modified': {
    type: 'string',
    description: "The guide's updatedAt as an HTTP date.",
    pattern: '^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$',
    examples: ['Mon, 02 Mar 2026 09:20:00 GMT'],
  },
  Link: {
    type: 'string',
    description:
      'RFC 8288 link to the next page, the same URL as nextCursor builds: `<…/api/v1/guides?cursor=…>; rel="next"`. Present only when nextCursor is.',
    pattern: '^<[^>]+>; rel="next"$',
    examples: [
      '<https://api.example.com/api/v1/guides?limit=2&cursor=WzEsImwiLDE3NzMyMzIyMDAwMDAsInByaW1lLWNvc3QtYW5kLXdlZWtseS1wbCJd.nM9eH_86UbEHmlKRQtwm6A>; rel="next"',
    ],
  },
  'Cache-Control': {
    type: 'string',
    description:
      'Shared caches (a CDN) may keep the response for max-age seconds and serve it stale while revalidating (CACHE_MAX_AGE, CACHE_STALE_WHILE_REVALIDATE).',
    pattern: '^public, max-age=[0-9]+, stale-while-revalidate=[0-9]+$',
    examples: ['public, max-age=60, stale-while-revalidate=300'],
  },
  Vary: {
    type: 'string',
    description: 'The response depends on these request headers.',
    enum: ['Accept, Accept-Encoding'],
  },
  'Retry-After': {
    type: 'integer',
    description: 'Seconds to wait before trying again.',
    minimum: 0,
    examples: [RETRY_AFTER_SECONDS],
  },
  Allow: {
    type: 'string',
    description: 'The methods every route of this read-only API accepts.',
    enum: ['GET, HEAD, OPTIONS'],
  },
} as const satisfies Record<string, HeaderSchema>;

export type HeaderName = keyof typeof HEADERS;

// Headers of a guide's Markdown representation (src/http/routes/guides.ts).
export const MARKDOWN_TOKENS_HEADER: HeaderSchema = {
  type: 'integer',
  description:
    "An estimate of the body's size in LLM tokens (its UTF-8 bytes divided by four, rounded up), not an exact count for any tokenizer. Markdown only.",
  minimum: 0,
  examples: [1612],
};

export const ALTERNATE_LINK_HEADER: HeaderSchema = {
  type: 'string',
  description:
    'RFC 8288 link to the guide\'s other representation: on JSON `<…/api/v1/guides/{slug}.md>; rel="alternate"; type="text/markdown"`, ' +
    'on Markdown `<…/api/v1/guides/{slug}>; rel="alternate"; type="application/json"`.',
  pattern: '^<[^>]+>; rel="alternate"; type="(?:application/json|text/markdown)"$',
  examples: ['<https://api.example.com/api/v1/guides/reduce-food-waste.md>; rel="alternate"; type="text/markdown"'],
};

const PROBLEM_CACHE_CONTROL: HeaderSchema = {
  type: 'string',
  description: 'Problems are never stored by caches.',
  enum: ['no-store'],
};

function pickHeaders(names: readonly HeaderName[]): Record<string, HeaderSchema> {
  return Object.fromEntries(names.map((name) => [name, HEADERS[name]]));
}

const EVERY_RESPONSE: readonly HeaderName[] = ['X-Request-Id', 'RateLimit', 'RateLimit-Policy'];
const CACHEABLE: readonly HeaderName[] = ['ETag', 'Cache-Control', 'Vary'];

export interface NamedExample {
  summary: string;
  value: unknown;
}

/** One media type of a 200 body: its schema and examples. */
export interface MediaTypeResponse {
  schema: TSchema;
  examples: Record<string, NamedExample>;
}

/** A 200 as operationResponses writes it: the body schema by reference, with its named examples. */
export interface ReferencedResponse {
  $ref: string;
  description: string;
  headers: Record<string, HeaderSchema>;
  'x-examples': Record<string, NamedExample>;
}

export interface OperationResponseOptions {
  /** The schema that serializes and documents the 200 body; one with an `$id` (addSharedSchemas) is referenced by name. */
  schema: TSchema;
  description: string;
  examples: Record<string, NamedExample>;
  /** The 200 body's media type when it is not JSON (`schema` then documents the text). */
  mediaType?: string;
  /** Other media types the 200 body can have, chosen by the request's Accept. */
  alternatives?: Record<string, MediaTypeResponse>;
  /** Headers of the 200 and 304 described here rather than in HEADERS (a Link with another relation). */
  extraHeaders?: Record<string, HeaderSchema>;
  /** Headers of the 200 and 304 beyond the ones every cacheable response has. */
  headers?: readonly HeaderName[];
  /** Whether the operation answers 404 (it looks something up). */
  notFound?: boolean;
  /** 400 examples of this operation (invalid-parameter, invalid-cursor…); default: an unknown parameter. */
  badRequestExamples?: Record<string, NamedExample>;
}

export function problemResponse(description: string, examples: Record<string, NamedExample>, extraHeaders: readonly HeaderName[] = []) {
  return {
    description,
    headers: { ...pickHeaders([...EVERY_RESPONSE, ...extraHeaders]), 'Cache-Control': PROBLEM_CACHE_CONTROL },
    content: { 'application/problem+json': { schema: ProblemRef, examples } },
  };
}

export function problemExample(
  base: string,
  name: ProblemName,
  summary: string,
  detail: string,
  errors?: Parameters<typeof problemBody>[3],
): NamedExample {
  return { summary, value: problemBody(base, name, detail, errors) };
}

/** The unknown-parameter 400 any operation gives; operations with parameters add their own. */
export function unknownParameterExample(base: string, accepted: readonly string[]): NamedExample {
  return problemExample(base, 'invalid-parameter', 'An unknown query parameter', 'One or more query parameters are invalid; see errors.', [
    {
      in: 'query',
      name: 'sort',
      detail: `is not a parameter of this operation; accepted parameters: ${accepted.length > 0 ? accepted.join(', ') : '(none)'}`,
    },
  ]);
}

/**
 * The full `response` map of a read operation: 200 (its schema, headers and examples), 304, and a
 * problem+json response for every failure the API can give, each with a real example.
 */
export function operationResponses(base: string, options: OperationResponseOptions): Record<string, unknown> {
  const successHeaders = { ...pickHeaders([...CACHEABLE, ...(options.headers ?? []), ...EVERY_RESPONSE]), ...options.extraHeaders };
  const isJsonOnly = options.mediaType === undefined && options.alternatives === undefined;
  const bodySchema = (options.schema as { $id?: string }).$id === undefined ? options.schema : refTo(options.schema);
  return {
    200: isJsonOnly
      ? {
          // A named body is a reference, so that the document names its type (openapi.ts moves it under content).
          ...bodySchema,
          description: options.description,
          headers: successHeaders,
          'x-examples': options.examples,
        }
      : {
          description: options.description,
          headers: successHeaders,
          content: {
            [options.mediaType ?? 'application/json']: { schema: bodySchema, examples: options.examples },
            ...options.alternatives,
          },
        },
    304: {
      type: 'null',
      description:
        'Not modified: the If-None-Match tag still matches the current representation. No body; the validators and caching headers are repeated.',
      headers: successHeaders,
    },
    400: problemResponse(
      'The request is invalid: a malformed, out-of-range, repeated or unknown query parameter (`invalid-parameter`, with `errors`), a cursor this API did not issue or issued for another search (`invalid-cursor`), or an HTTP request that cannot be understood (`bad-request`). Fix the request; do not retry it unchanged.',
      options.badRequestExamples ?? { unknownParameter: unknownParameterExample(base, []) },
    ),
    ...(options.notFound
      ? {
          404: problemResponse(
            'No published guide has this slug. Unpublished, unknown and malformed slugs get this same response, byte for byte, so nothing about unpublished content leaks.',
            { notFound: problemExample(base, 'not-found', 'An unknown, unpublished or malformed slug', NOT_FOUND_DETAIL) },
          ),
        }
      : {}),
    405: problemResponse(
      'The API is read-only: any method but GET, HEAD and OPTIONS gets this, with an Allow header.',
      {
        methodNotAllowed: problemExample(
          base,
          'method-not-allowed',
          'A POST, PUT, PATCH or DELETE',
          'This API is read-only: use GET or HEAD.',
        ),
      },
      ['Allow'],
    ),
    414: problemResponse('The request URL is longer than the server accepts (`uri-too-long`).', {
      uriTooLong: problemExample(base, 'uri-too-long', 'An over-long URL', PROBLEM_TYPES['uri-too-long'].about),
    }),
    429: problemResponse(
      'This client (by IP address, IPv6 by /64) has spent its request budget for the current window, or, on a search, already has SEARCH_CONCURRENCY_PER_CLIENT searches in flight (default 4; its RateLimit headers then carry a `searches-in-flight` item) (`rate-limited`). Wait Retry-After seconds, or for the answers to the searches already sent.',
      {
        rateLimited: problemExample(
          base,
          'rate-limited',
          'The per-client budget is spent',
          'This client sent more than 600 requests this minute. Retry after the number of seconds in Retry-After.',
        ),
        searchesInFlight: problemExample(
          base,
          'rate-limited',
          'Too many searches in flight from this client',
          'This client has 4 searches in flight, the most allowed at once. Wait for their answers, or retry after the number of seconds in Retry-After.',
        ),
      },
      ['Retry-After'],
    ),
    431: problemResponse('The request headers are larger than the server accepts (`request-header-fields-too-large`).', {
      headersTooLarge: problemExample(
        base,
        'request-header-fields-too-large',
        'Oversized request headers',
        PROBLEM_TYPES['request-header-fields-too-large'].about,
      ),
    }),
    500: problemResponse(
      'The server failed unexpectedly (`internal-error`). The body is generic; the failure is logged with the X-Request-Id.',
      {
        internalError: problemExample(
          base,
          'internal-error',
          'An unexpected failure',
          'The server failed unexpectedly. The failure was logged with this request id.',
        ),
      },
    ),
    503: problemResponse(
      'The server cannot reach its database, is overloaded, or has no content imported yet (`service-unavailable`). Retry after Retry-After seconds.',
      {
        databaseUnreachable: problemExample(
          base,
          'service-unavailable',
          'The database is unreachable',
          'The service cannot reach its database right now. Retry shortly.',
        ),
        overloaded: problemExample(
          base,
          'service-unavailable',
          'The server sheds load (event loop saturated)',
          'The server is overloaded right now. Retry after the number of seconds in Retry-After.',
        ),
        searchQueueFull: problemExample(
          base,
          'service-unavailable',
          'The search queue is full (searches only)',
          'Too many searches are waiting right now. Retry after the number of seconds in Retry-After; reading guides is not affected.',
        ),
      },
      ['Retry-After'],
    ),
  };
}

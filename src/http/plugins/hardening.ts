/**
 * Hardening for a public JSON API: security headers, slow-client timeouts, caps on URL and header
 * size answered with problems (including on Node's clientError path, before any request exists),
 * and connection draining on close.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { Config } from '../../config.js';
import { AppError, PROBLEM_TYPES, problemBody } from '../problems.js';
import type { ProblemName } from '../problems.js';
import fastifyPlugin from 'fastify-plugin';
import { methodNotAllowed } from './method-rule.js';
import type { MetricsTable } from './metrics.js';

/**
 * The Content-Security-Policy of every response: a JSON API loads nothing and may be framed by
 * nobody. Routes that serve HTML (the problem pages, /docs) replace it with their own policy.
 */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * How often Node looks for connections past headersTimeout/requestTimeout. Node's default is 30 s,
 * which lets a slowloris connection outlive a 10 s headersTimeout by up to 30 s.
 */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

/** How often a closing server drops connections that went idle after their last response. */
const DRAIN_SWEEP_MS = 100;

export interface ClientErrorCounter {
  clientErrors: Record<string, number>;
}

/** Adds the connection errors `counter` receives (see hardenedServerOptions) to /metrics. */
export function measureConnectionErrors(metrics: MetricsTable, counter: ClientErrorCounter): void {
  metrics.add({
    name: 'guides_connection_errors_total',
    type: 'counter',
    label: 'problem',
    read: () => ({ ...counter.clientErrors }),
    help: 'Connections answered before a request could be parsed (slow, oversized or malformed), by problem.',
  });
}

/** The method token and request target of a request line. */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\/[^ \r\n]*) HTTP\/1\.[01]\r?\n/;

/** A request line longer than the URL cap, that never ended before Node's header limit: a 414, not a 431. */
function isOverlongRequestLine(rawPacket: unknown, maxUrlLength: number): boolean {
  if (!Buffer.isBuffer(rawPacket)) return false;
  if (!/^[A-Z]{3,10} /.test(rawPacket.subarray(0, 11).toString('latin1'))) return false;
  const lineEnd = rawPacket.indexOf('\r\n');
  return lineEnd === -1 || lineEnd > maxUrlLength;
}

/**
 * RFC 9112 §3.2: exactly one Host header, or none on HTTP/1.0; anything else is a 400. Node
 * joins repeated Host headers into one, so they are counted in the raw headers.
 */
export function hasValidHost(request: IncomingMessage): boolean {
  let hosts = 0;
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]?.toLowerCase() === 'host') hosts += 1;
  }
  return hosts === 1 || (hosts === 0 && request.httpVersion === '1.0');
}

/**
 * Fastify/Node server options: timeouts, header cap, the clientError handler, trusted proxies.
 * `counter` receives one increment per connection-level error, by problem name.
 */
export function hardenedServerOptions(config: Config, counter: ClientErrorCounter): Partial<FastifyServerOptions> {
  const base = config.publicBaseUrl;
  const staticHeaders = [
    'Content-Type: application/problem+json; charset=utf-8',
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    `Content-Security-Policy: ${API_CONTENT_SECURITY_POLICY}`,
    'Access-Control-Allow-Origin: *',
    'Connection: close',
  ].join('\r\n');

  function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    let name: ProblemName;
    let extraHeaders = '';
    let detail: string | undefined;
    const requestLine = Buffer.isBuffer(error.rawPacket)
      ? (REQUEST_LINE.exec(error.rawPacket.subarray(0, 2048).toString('latin1')) ?? undefined)
      : undefined;
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      name = isOverlongRequestLine(error.rawPacket, config.maxUrlLength) ? 'uri-too-long' : 'request-header-fields-too-large';
    } else if (error.code === 'HPE_INVALID_METHOD' && requestLine !== undefined) {
      // A method Node's parser does not know (FOO, get): another method, so a 405 as for any other.
      name = 'method-not-allowed';
      const refusal = methodNotAllowed(requestLine[2] as string);
      detail = refusal.detail;
      extraHeaders = `Allow: ${refusal.headers.allow}\r\n`;
    } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      name = 'request-timeout';
    } else {
      name = 'bad-request';
    }
    counter.clientErrors[name] = (counter.clientErrors[name] ?? 0) + 1;
    const requestId = randomUUID();
    this.log.info({ requestId, code: error.code, status: PROBLEM_TYPES[name].status }, 'client error before a request was parsed');
    // A response already under way on this connection cannot be followed by another status line.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const { status, title } = PROBLEM_TYPES[name];
      const body = JSON.stringify(problemBody(base, name, detail ?? PROBLEM_TYPES[name].about));
      socket.end(
        `HTTP/1.1 ${status} ${title}\r\n${staticHeaders}\r\n${extraHeaders}X-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      // A peer that stops reading must not hold the socket open.
      setTimeout(() => socket.destroy(), 1000).unref();
    } else {
      socket.destroy();
    }
  }

  return {
    // Fastify's own 503 on closing is plain JSON; requests that arrive on open connections while
    // we drain are served (with Connection: close) instead.
    return503OnClosing: false,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // Fastify passes `http` to http.createServer: the only place these two can be set.
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
      maxHeaderSize: config.maxHeaderBytes,
      // Node's own refusal of a missing Host is a bare 400; registerHardening answers it as a problem.
      requireHostHeader: false,
    },
    trustProxy: config.trustProxy === false ? false : [...config.trustProxy],
    clientErrorHandler,
  } as Partial<FastifyServerOptions>;
}

/** Security headers on every response (register first: a later hook's error still has them); draining on close. */
export function registerHardening(app: FastifyInstance, config: Config): void {
  const isHttps = config.publicBaseUrl.startsWith('https:');
  const badHost = new AppError('bad-request', 'An HTTP/1.1 request must carry exactly one Host header.');
  const onRequest = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('content-security-policy', API_CONTENT_SECURITY_POLICY);
    // Browsers ignore HSTS over plain HTTP; behind a TLS proxy it pins clients to HTTPS.
    if (isHttps) reply.header('strict-transport-security', 'max-age=31536000');
    done(hasValidHost(request.raw) ? undefined : badHost);
  };

  // A client may half-close its connection (send FIN) right after its request: that does not end
  // the request nor say the client lost interest (RFC 9112 §9.6). Node's default aborts whatever
  // is still being answered on such a connection, so only answers made in the same turn (cache
  // hits) got out; searches and other uncached pages were dropped without a word. Now the answer
  // is written and the connection closed after it.
  (app.server as typeof app.server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;

  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onRequest', onRequest);
      let sweep: NodeJS.Timeout | undefined;
      instance.addHook('preClose', async () => {
        // server.close() drops the connections idle at that moment; a connection whose response
        // was still in flight goes idle later and would otherwise wait out keepAliveTimeout.
        sweep = setInterval(() => instance.server.closeIdleConnections(), DRAIN_SWEEP_MS);
        sweep.unref();
      });
      instance.addHook('onClose', async () => clearInterval(sweep));
    }),
  );
}

/** 414 for a request target over MAX_URL_LENGTH (register after the rate limiter: it still counts, with headers). */
export function registerUrlCap(app: FastifyInstance, config: Config): void {
  const maxUrlLength = config.maxUrlLength;
  const uriTooLong = new AppError('uri-too-long', PROBLEM_TYPES['uri-too-long'].about);
  app.register(
    fastifyPlugin(async (instance) => {
      instance.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
        // The URL as received: app.ts rewrites unroutable paths before hooks run.
        done(request.originalUrl.length > maxUrlLength ? uriTooLong : undefined);
      });
    }),
  );
}

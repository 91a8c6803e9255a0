/**
 * Shared by the fuzz suites: what every error response must be whatever the request, a raw-socket
 * client for bytes no HTTP library would send, and body decoding. Schema conformance itself is
 * checked by the central contract checker (test/helpers/contract.ts), which buildTestApp wraps
 * around app.inject, and which the raw-socket suite calls directly.
 */
import { connect } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { PROBLEM_TYPES } from '../../src/http/problems.js';

/** The documented path template (`/api/v1/guides/{slug}`) a request path falls under, if any. */
export function documentedTemplate(document: { paths: Record<string, unknown> }, pathname: string): string | undefined {
  return Object.keys(document.paths).find((template) =>
    new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname),
  );
}

/** The response body as text, decompressed when the server compressed it. */
export function bodyText(rawPayload: Buffer, contentEncoding: string | undefined): string {
  // HEAD answers and 304s announce an encoding but carry no bytes.
  if (rawPayload.length === 0) return '';
  switch ((contentEncoding ?? '').trim().toLowerCase()) {
    case 'gzip':
      return gunzipSync(rawPayload).toString('utf8');
    case 'br':
      return brotliDecompressSync(rawPayload).toString('utf8');
    case 'deflate':
      return inflateSync(rawPayload).toString('utf8');
    default:
      return rawPayload.toString('utf8');
  }
}

export interface SeenResponse {
  method: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/**
 * Checks every error response must pass beyond its schema: a problem document whose status is the
 * HTTP status and whose type names that status, no ETag, no stack trace, SQL or file path.
 * Returns what is wrong, or undefined.
 */
export function problemViolation(res: SeenResponse, baseUrl: string): string | undefined {
  const contentType = String(res.headers['content-type'] ?? '');
  if (!contentType.startsWith('application/problem+json'))
    return `error ${res.status} is ${contentType || 'untyped'}, not application/problem+json`;
  if (res.headers.etag !== undefined) return `error ${res.status} carries an ETag`;
  if (res.method === 'HEAD') return res.body === '' ? undefined : 'HEAD error has a body';
  let problem: { status?: unknown; type?: unknown };
  try {
    problem = JSON.parse(res.body) as { status?: unknown; type?: unknown };
  } catch {
    return `error ${res.status} body is not JSON`;
  }
  if (problem.status !== res.status) return `problem status ${String(problem.status)} differs from HTTP ${res.status}`;
  const name = String(problem.type).slice(`${baseUrl}/problems/`.length);
  const known = (PROBLEM_TYPES as Record<string, { status: number } | undefined>)[name];
  if (!String(problem.type).startsWith(`${baseUrl}/problems/`) || known?.status !== res.status)
    return `problem type ${String(problem.type)} does not fit ${res.status}`;
  if (
    /\bat [^\n]*\.[cm]?[jt]s:\d+|node_modules|\/work\/|\/tmp\/|SQLITE_|sqlite3|syntax error|fts5|tsquery|select .* from/i.test(res.body)
  ) {
    return 'problem body reveals internals';
  }
  return undefined;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Sends bytes exactly as given over a fresh TCP connection and reads the one response, for requests
 * no HTTP client library would send (broken request lines, raw control bytes, oversized headers).
 * Resolves undefined when the server closed the connection without answering.
 */
export function sendRaw(
  port: number,
  request: Buffer | string,
  options: { isHead?: boolean; timeoutMs?: number } = {},
): Promise<RawResponse | undefined> {
  const { isHead = false, timeoutMs = 5000 } = options;
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (): void => {
      clearTimeout(timer);
      try {
        const data = Buffer.concat(chunks);
        resolve(data.length === 0 ? undefined : tryParse(data, true, isHead));
      } catch (error) {
        reject(error as Error);
      }
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      // One response is all we asked for: stop once it is complete, whatever the server does with the socket.
      const parsed = tryParse(Buffer.concat(chunks), false, isHead);
      if (parsed) {
        socket.destroy();
        clearTimeout(timer);
        resolve(parsed);
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A reset after the answer (or instead of one) is the server refusing the connection: not a crash.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') finish();
      else {
        clearTimeout(timer);
        reject(error);
      }
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.end(request);
  });
}

/**
 * One HTTP/1.1 response from the bytes so far; undefined while incomplete. When the connection has
 * ended (`isComplete`), whatever body came is the body.
 */
function tryParse(data: Buffer, isComplete: boolean, isHead: boolean): RawResponse | undefined {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd === -1) {
    if (isComplete && data.length > 0) throw new Error(`truncated HTTP response: ${JSON.stringify(data.toString('latin1').slice(0, 200))}`);
    return undefined;
  }
  const lines = data.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  // A HEAD answer ends with its head, whatever length it announces (an answer to pipelined junk may follow).
  if (isHead) return { status, headers, body: Buffer.alloc(0) };
  let rest = data.subarray(headEnd + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = lineEnd === -1 ? Number.NaN : parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (size === 0) return { status, headers, body: Buffer.concat(parts) };
      if (Number.isNaN(size) || rest.length < lineEnd + 2 + size + 2)
        return isComplete ? { status, headers, body: Buffer.concat(parts) } : undefined;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
  }
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (length !== undefined && rest.length >= length) return { status, headers, body: rest.subarray(0, length) };
  return isComplete ? { status, headers, body: rest } : undefined;
}

/**
 * Response compression (gzip and brotli, bodies of 1 KB and more, when the client accepts them).
 *
 * Cached representations are compressed once per content coding and kept next to the identity
 * bytes in the representation cache (caching.ts), so a hot guide costs no compression at all.
 * The /docs assets are files streamed from node_modules (Swagger UI's bundle is 1.6 MB): each is
 * compressed once per coding and file version (its ETag) and kept, because compressing the bundle
 * costs ~45 ms of CPU and must not be something any client can make us do 600 times a minute.
 * /metrics and the /docs page go through @fastify/compress, which leaves alone any response that
 * already has a Content-Encoding: nothing is ever compressed twice. Other routes either answer from
 * the representation cache or answer a few bytes (health, problems), so they skip its hooks.
 */
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants as zlibConstants, gzip, gzipSync } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { DOCS_PREFIX } from './docs.js';
import { globalPlugin, hooksOf } from './global-plugin.js';
import { METRICS_PATH } from './metrics.js';

export const COMPRESSION_THRESHOLD_BYTES = 1024;

export type ContentCoding = 'br' | 'gzip';

/**
 * Brotli quality 5 compresses a 10 KB guide about as small as quality 9 in 0.2 ms instead of 7 ms,
 * which matters because an uncached search result is compressed while its client waits.
 */
const BROTLI_QUALITY = 5;

const MEMO_LIMIT = 256;
const memo = new Map<string, ContentCoding | null>();

function qualityOf(params: string[]): number {
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name?.trim().toLowerCase() === 'q') {
      const q = Number(value?.trim());
      return Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0;
    }
  }
  return 1;
}

function parse(header: string): ContentCoding | null {
  let br: number | undefined;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const member of header.split(',')) {
    const [coding = '', ...params] = member.split(';');
    const name = coding.trim().toLowerCase();
    if (name === 'br') br = qualityOf(params);
    else if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip ?? 0, qualityOf(params));
    else if (name === '*') any = qualityOf(params);
  }
  const brQ = br ?? any ?? 0;
  const gzipQ = gzip ?? any ?? 0;
  // Brotli wins ties: same quality to the client, smaller on the wire.
  if (brQ > 0 && brQ >= gzipQ) return 'br';
  if (gzipQ > 0) return 'gzip';
  return null;
}

/**
 * The coding to send for an Accept-Encoding header (RFC 9110 §12.5.3, q-values and `*` honoured),
 * or undefined for identity. Clients send few distinct headers, so answers are memoized.
 */
export function negotiateContentCoding(header: string | undefined): ContentCoding | undefined {
  if (header === undefined || header === '') return undefined;
  let choice = memo.get(header);
  if (choice === undefined) {
    choice = parse(header);
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(header, choice);
  }
  return choice ?? undefined;
}

const brotliCompressAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

const brotliOptions = (body: Buffer): { params: Record<number, number> } => ({
  params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length },
});
const GZIP_OPTIONS = { level: 6 };

export function compressBody(coding: ContentCoding, body: Buffer): Buffer {
  return coding === 'br' ? brotliCompressSync(body, brotliOptions(body)) : gzipSync(body, GZIP_OPTIONS);
}

/** compressBody on zlib's thread pool, leaving the event loop free meanwhile. */
export function compressBodyOffLoop(coding: ContentCoding, body: Buffer): Promise<Buffer> {
  return coding === 'br' ? brotliCompressAsync(body, brotliOptions(body)) : gzipAsync(body, GZIP_OPTIONS);
}

/** Largest static asset (by its Content-Length) compressed and kept; bigger ones are streamed uncompressed. */
const STATIC_MAX_BYTES = 8 * 1024 * 1024;
const STATIC_CACHE_MAX_BYTES = 32 * 1024 * 1024;
const COMPRESSIBLE_TYPE = /^(?:text\/|application\/(?:javascript|json)|image\/svg\+xml)/;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

/** onSend for file streams (with an ETag naming the file version): compressed once per coding and version. */
function createStaticAssetCompression(): onSendHookHandler {
  // Promises, so that concurrent first requests share one compression.
  const cache = new Map<string, Promise<Buffer>>();
  let cachedBytes = 0;
  const compressOnce = (key: string, coding: ContentCoding, stream: Readable): Promise<Buffer> => {
    const pending = (async () => {
      const raw = await readAll(stream);
      // In the thread pool, so the first request for the bundle does not stall everyone else;
      // brotli 9 is within 3 % of 11's size at a twentieth of its 5 s on the Swagger UI bundle.
      const body = coding === 'br'
        ? await brotliCompressAsync(raw, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: raw.length } })
        : await gzipAsync(raw, { level: 9 });
      if (cachedBytes + body.length > STATIC_CACHE_MAX_BYTES) {
        cache.clear();
        cachedBytes = 0;
      }
      cachedBytes += body.length;
      return body;
    })();
    cache.set(key, pending);
    pending.catch(() => cache.delete(key));
    return pending;
  };
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (!(payload instanceof Readable) || reply.statusCode !== 200 || reply.hasHeader('content-encoding')) return payload;
    const etag = reply.getHeader('etag');
    const type = String(reply.getHeader('content-type') ?? '');
    const length = Number(reply.getHeader('content-length') ?? NaN);
    const coding = negotiateContentCoding(request.headers['accept-encoding']);
    if (coding === undefined || typeof etag !== 'string' || !COMPRESSIBLE_TYPE.test(type)
      || !(length >= COMPRESSION_THRESHOLD_BYTES && length <= STATIC_MAX_BYTES)) return payload;
    const key = `${coding} ${etag} ${request.url}`;
    const cached = cache.get(key);
    // The file stream is not needed when the compressed bytes exist (or are being made) already.
    if (cached) payload.destroy();
    const body = await (cached ?? compressOnce(key, coding, payload));
    // Byte ranges would address the uncompressed file.
    reply.removeHeader('accept-ranges');
    reply.header('content-encoding', coding).header('content-length', body.length).header('vary', 'Accept-Encoding');
    return body;
  };
}

/** Compression for responses that do not come from the representation cache. Register before any route. */
export function registerCompression(app: FastifyInstance): void {
  const compressStaticAsset = createStaticAssetCompression();
  app.register(globalPlugin(async (instance) => {
    // Runs before @fastify/compress's onRoute hook (registered below), so it decides for every route.
    instance.addHook('onRoute', (route) => {
      if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) {
        route.onSend = [...hooksOf(route.onSend), compressStaticAsset];
      } else if (route.url !== METRICS_PATH) {
        // Every other route either answers from the representation cache (compressed there) or
        // answers a few bytes; @fastify/compress's two hooks would only cost time on the hot path.
        route.compress = false;
      }
    });
  }));
  app.register(compress, {
    global: true,
    threshold: COMPRESSION_THRESHOLD_BYTES,
    encodings: ['br', 'gzip'],
    // The API takes no request bodies; no decompression hook on the request path.
    globalDecompression: false,
    brotliOptions: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
  });
}

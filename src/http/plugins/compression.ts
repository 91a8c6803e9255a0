/**
 * Response compression (gzip and brotli, bodies of 1 KB and more, when the client accepts them).
 *
 * Cached representations are compressed once per content coding and kept next to the identity
 * bytes in the representation cache (cache/representation-cache.ts), so a hot guide costs no compression at all.
 * The /docs assets are files streamed from node_modules (Swagger UI's bundle is over a megabyte):
 * each is compressed once per coding and file version (its ETag) and kept, because compressing the
 * bundle must not be something any client can make us do 600 times a minute.
 * /metrics and the /docs page go through @fastify/compress, which leaves alone any response that
 * already has a Content-Encoding: nothing is ever compressed twice. Other routes either answer from
 * the representation cache or answer a few bytes (health, problems), so they skip its hooks.
 */
import { Readable } from 'node:stream';
import { constants as zlibConstants } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { DOCS_PREFIX } from './docs.js';
import fastifyPlugin from 'fastify-plugin';
import { hooksOf } from './hooks-of.js';
import { METRICS_PATH } from './metrics.js';
import {
  BROTLI_QUALITY,
  COMPRESSION_THRESHOLD_BYTES,
  compressBodyOffLoop,
  negotiateContentCoding,
} from '../../representation/representation.js';
import type { ContentCoding } from '../../representation/representation.js';

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
      // brotli 9 is nearly 11's size at a small part of its time on the Swagger UI bundle.
      const body = await compressBodyOffLoop(coding, raw, 9);
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
    if (
      coding === undefined ||
      typeof etag !== 'string' ||
      !COMPRESSIBLE_TYPE.test(type) ||
      !(length >= COMPRESSION_THRESHOLD_BYTES && length <= STATIC_MAX_BYTES)
    )
      return payload;
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
  app.register(
    fastifyPlugin(async (instance) => {
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
    }),
  );
  app.register(compress, {
    global: true,
    threshold: COMPRESSION_THRESHOLD_BYTES,
    encodings: ['br', 'gzip'],
    // The API takes no request bodies; no decompression hook on the request path.
    globalDecompression: false,
    brotliOptions: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
  });
}

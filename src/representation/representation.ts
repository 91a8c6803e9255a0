/**
 * What a representation's bytes are made with: content-coding negotiation, compression and the
 * hash behind strong ETags. Kept apart from the Fastify plugins (compression.ts, cache/representation-cache.ts) so
 * that a search worker thread can render a page exactly as the event loop would, without loading
 * Fastify.
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants as zlibConstants, gzip, gzipSync } from 'node:zlib';
import xxhash from 'xxhash-wasm';

/** Bodies smaller than this are sent as they are. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

export type ContentCoding = 'br' | 'gzip';

/**
 * Brotli quality 5 compresses a guide about as small as quality 9 in a small fraction of its time,
 * which matters because an uncached search result is compressed while its client waits
 * (docs/performance.md).
 */
export const BROTLI_QUALITY = 5;

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

/**
 * Brotli's window fits the body (its sliding window holds 2^bits − 16 bytes): a larger one finds
 * nothing more in a body that short, and the default makes each compression allocate and fault in
 * megabytes (docs/performance.md).
 */
export function brotliWindowBits(length: number): number {
  const bits = Math.ceil(Math.log2(length + 16));
  return Math.min(zlibConstants.BROTLI_DEFAULT_WINDOW, Math.max(zlibConstants.BROTLI_MIN_WINDOW_BITS, bits));
}

export const brotliOptions = (body: Uint8Array, quality = BROTLI_QUALITY): { params: Record<number, number> } => ({
  params: {
    [zlibConstants.BROTLI_PARAM_QUALITY]: quality,
    [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length,
    [zlibConstants.BROTLI_PARAM_LGWIN]: brotliWindowBits(body.length),
  },
});
const GZIP_OPTIONS = { level: 6 };

export function compressBody(coding: ContentCoding, body: Uint8Array): Buffer {
  return coding === 'br' ? brotliCompressSync(body, brotliOptions(body)) : gzipSync(body, GZIP_OPTIONS);
}

/**
 * compressBody on zlib's thread pool, leaving the event loop free meanwhile. `level` (brotli
 * quality or gzip level) replaces the defaults, for bodies compressed once and kept long.
 */
export function compressBodyOffLoop(coding: ContentCoding, body: Uint8Array, level?: number): Promise<Buffer> {
  return coding === 'br'
    ? brotliCompressAsync(body, brotliOptions(body, level))
    : gzipAsync(body, level === undefined ? GZIP_OPTIONS : { level });
}

/**
 * `bytes` in memory of their own. A Buffer is often a view of a larger allocation: zlib's output
 * is a slice of a larger chunk (a small compressed guide kept the whole chunk alive), and a small
 * Buffer is a slice of Node's shared pool. Bytes kept for long (the representation cache) or sent to
 * another thread (a structured clone copies the whole underlying ArrayBuffer) are copied to their
 * exact size first; bytes that own their memory already are returned as they are.
 */
export function ownBytes(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.byteLength);
  bytes.copy(own);
  return own;
}

const SECOND_SEED = 0x9e3779b97f4a7c15n;
let h64Raw: ((input: Uint8Array, seed?: bigint) => bigint) | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads the hash's WebAssembly build in this thread. Each thread that hashes awaits it once before:
 * the app when it gets ready, a search worker before its first message. Not a top-level await:
 * Node 24 aborts the process when a worker still awaiting at its top level is stopped
 * (nodejs/node#53238).
 */
export function loadRepresentationHash(): Promise<void> {
  loading ??= xxhash().then((hasher) => {
    h64Raw = hasher.h64Raw;
  });
  return loading;
}

/**
 * The opaque part of a representation's strong ETag: a hash of its uncompressed body, 128 bits
 * (xxHash64 under two seeds) as 22 base64url characters. Not cryptographic, and need not be: a tag
 * only tells one representation of a URL from another, and every uncached search page is hashed,
 * where SHA-256 costs several times more on CPUs without SHA instructions.
 */
export function representationHash(body: Uint8Array): string {
  if (h64Raw === undefined) throw new Error('representationHash: await loadRepresentationHash() first');
  const hash = Buffer.allocUnsafe(16);
  hash.writeBigUInt64BE(h64Raw(body, 0n), 0);
  hash.writeBigUInt64BE(h64Raw(body, SECOND_SEED), 8);
  return hash.toString('base64url');
}

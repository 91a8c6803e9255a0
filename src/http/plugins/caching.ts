/**
 * Representation cache and HTTP validators. A successful GET is rendered once per content
 * version: serialized with the route's schema, hashed into a strong ETag, and kept in a bounded
 * LRU. Later requests (and every instance sharing the database) get the same bytes and ETag;
 * If-None-Match then costs a map lookup. Only 200s pass through here, so errors never carry
 * an ETag and can never become a 304.
 *
 * Content codings: a body of 1 KB or more is compressed at most once per coding (br, gzip), the
 * first time a client asks for that coding, and the compressed bytes are kept with the
 * representation. Each coding is a different representation, so it has its own strong ETag: the
 * identity tag `"<hash>"` plus a suffix, `"<hash>-br"` or `"<hash>-gzip"`, where the hash is of
 * the uncompressed body. If-None-Match matches any coding of the current content (a client that
 * switched codings still gets its 304); the 304 carries the tag of the coding this request selects.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COMPRESSION_THRESHOLD_BYTES, compressBody, compressBodyOffLoop, negotiateContentCoding, representationHash } from '../representation.js';
import type { ContentCoding } from '../representation.js';

/** A representation as a route renders it: a payload to serialize with the route's schema, or the body itself. */
export type Rendered = RenderedCommon & (
  | {
    payload: unknown;
    /** For non-JSON representations (llms.txt, HTML): the media type; `payload` is then the body text as is. */
    contentType?: string;
  }
  | {
    /** JSON bytes made already (guide-list-body.ts), possibly on another thread. */
    body: Buffer;
    /** representationHash(body), when it was computed with the body. */
    hash?: string;
    /** The body already compressed with one coding, kept as that coding's variant. */
    encoded?: { coding: ContentCoding; body: Buffer };
  });

interface RenderedCommon {
  lastModified?: string;
  link?: string;
}

interface Variant {
  body: Buffer;
  etag: string;
}

interface Representation {
  version: number;
  identity: Variant;
  br?: Variant;
  gzip?: Variant;
  /** The ETags of every coding this representation can be sent in. */
  etags: readonly string[];
  isCompressible: boolean;
  contentType: string;
  lastModified?: string;
  link?: string;
  /** Bytes held for this entry: the identity body plus the compressed variants made so far. */
  bytes: number;
}

export interface CacheOptions {
  maxEntries: number;
  maxBytes: number;
  cacheControl: string;
  /** The content version the representation belongs to; bumps invalidate everything. */
  currentVersion: () => number;
}

/** Counters read by /metrics; plain numbers so the request path pays an increment, nothing more. */
export interface CacheStats {
  hits: number;
  misses: number;
  compressions: Record<ContentCoding, number>;
}

const VARY = 'Accept, Accept-Encoding';
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Parses If-None-Match (a list, `*`, weak or strong tags) and applies the weak comparison
 * (RFC 9110 §13.1.2) against the given tag or tags.
 */
export function ifNoneMatchHits(header: string | undefined, etags: string | readonly string[]): boolean {
  if (!header) return false;
  const list = typeof etags === 'string' ? [etags] : etags;
  if (list.includes(header)) return true;
  if (header.trim() === '*') return true;
  const opaque = list.map((etag) => etag.replace(/^W\//, ''));
  return header.split(',').some((tag) => opaque.includes(tag.trim().replace(/^W\//, '')));
}

export function createRepresentationCache(options: CacheOptions) {
  const entries = new Map<string, Representation>();
  let bytes = 0;
  const stats: CacheStats = { hits: 0, misses: 0, compressions: { br: 0, gzip: 0 } };

  function evictBeyondLimits(): void {
    for (const [oldKey, old] of entries) {
      if (entries.size <= options.maxEntries && bytes <= options.maxBytes) break;
      entries.delete(oldKey);
      bytes -= old.bytes;
    }
  }

  function remember(key: string, representation: Representation): void {
    const previous = entries.get(key);
    if (previous) {
      bytes -= previous.bytes;
      entries.delete(key);
    }
    entries.set(key, representation);
    bytes += representation.bytes;
    evictBeyondLimits();
  }

  function build(version: number, rendered: Rendered, reply: FastifyReply): Representation {
    let body: Buffer;
    let contentType = JSON_TYPE;
    if ('body' in rendered) body = rendered.body;
    else {
      contentType = rendered.contentType ?? JSON_TYPE;
      const text = rendered.contentType !== undefined && typeof rendered.payload === 'string' ? rendered.payload : String(reply.serialize(rendered.payload));
      body = Buffer.from(text, 'utf8');
    }
    const hash = ('body' in rendered ? rendered.hash : undefined) ?? representationHash(body);
    const isCompressible = body.length >= COMPRESSION_THRESHOLD_BYTES;
    return {
      version,
      identity: { body, etag: `"${hash}"` },
      etags: isCompressible ? [`"${hash}"`, `"${hash}-br"`, `"${hash}-gzip"`] : [`"${hash}"`],
      isCompressible,
      contentType,
      ...(rendered.lastModified ? { lastModified: rendered.lastModified } : {}),
      ...(rendered.link ? { link: rendered.link } : {}),
      bytes: body.length,
    };
  }

  function variantOf(key: string, representation: Representation, coding: ContentCoding): Variant {
    return representation[coding] ?? keepVariant(key, representation, coding, compressBody(coding, representation.identity.body));
  }

  function keepVariant(key: string, representation: Representation, coding: ContentCoding, body: Buffer): Variant {
    const variant: Variant = { body, etag: `${representation.identity.etag.slice(0, -1)}-${coding}"` };
    stats.compressions[coding] += 1;
    representation[coding] = variant;
    representation.bytes += variant.body.length;
    if (entries.get(key) === representation) {
      bytes += variant.body.length;
      evictBeyondLimits();
    }
    return variant;
  }

  function answer(request: FastifyRequest, reply: FastifyReply, key: string, representation: Representation): void {
    const coding = representation.isCompressible ? negotiateContentCoding(request.headers['accept-encoding']) : undefined;
    const variant = coding === undefined ? representation.identity : variantOf(key, representation, coding);
    reply.header('etag', variant.etag).header('cache-control', options.cacheControl).header('vary', VARY);
    if (representation.lastModified) reply.header('last-modified', representation.lastModified);
    if (representation.link) reply.header('link', representation.link);
    if (ifNoneMatchHits(request.headers['if-none-match'], representation.etags)) {
      reply.code(304).send();
      return;
    }
    if (coding !== undefined) reply.header('content-encoding', coding);
    reply.type(representation.contentType).send(variant.body);
  }

  return {
    get size(): number {
      return entries.size;
    },
    get bytes(): number {
      return bytes;
    },
    stats,
    clear(): void {
      entries.clear();
      bytes = 0;
    },
    /**
     * Answers from the cache, or renders, caches and answers. `key` must identify the representation
     * fully. A hit is answered synchronously (no promise, no microtask turn); a miss returns the
     * promise of its rendering.
     */
    serve(request: FastifyRequest, reply: FastifyReply, key: string, render: () => Promise<Rendered>): Promise<void> | undefined {
      const version = options.currentVersion();
      const cached = entries.get(key);
      if (cached !== undefined && cached.version === version) {
        stats.hits += 1;
        // Refresh recency for the LRU.
        entries.delete(key);
        entries.set(key, cached);
        answer(request, reply, key, cached);
        return undefined;
      }
      stats.misses += 1;
      return render().then(async (rendered) => {
        const representation = build(version, rendered, reply);
        remember(key, representation);
        if ('encoded' in rendered && rendered.encoded && representation.isCompressible) {
          keepVariant(key, representation, rendered.encoded.coding, rendered.encoded.body);
        }
        // A miss compresses on zlib's thread pool: a large page (a search of 50 results) costs
        // ~0.6 ms of brotli, which on the event loop would hold up every other request. (A hit
        // asking for a coding not made yet compresses in place: rare, and then kept.)
        const coding = representation.isCompressible ? negotiateContentCoding(request.headers['accept-encoding']) : undefined;
        if (coding !== undefined && !representation[coding]) {
          const body = await compressBodyOffLoop(coding, representation.identity.body);
          if (!representation[coding]) keepVariant(key, representation, coding, body);
        }
        answer(request, reply, key, representation);
      });
    },
  };
}

export type RepresentationCache = ReturnType<typeof createRepresentationCache>;

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
import type { OutgoingHttpHeader } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import {
  COMPRESSION_THRESHOLD_BYTES,
  compressBody,
  compressBodyOffLoop,
  loadRepresentationHash,
  negotiateContentCoding,
  ownBytes,
  representationHash,
} from '../../representation/representation.js';
import type { ContentCoding } from '../../representation/representation.js';
import type { MetricsTable } from '../plugins/metrics.js';
import { ifNoneMatchHits } from './conditional.js';
import { Doorkeeper } from './doorkeeper.js';
import type { Rendered } from './rendered.js';
import { UrlIndex } from './url-index.js';
import type { Negotiated } from './url-index.js';

interface Variant {
  body: Buffer;
  etag: string;
  /**
   * The headers Fastify sent with this variant, by status, less the per-request ones
   * (fast-path/early-answers.ts). Named keys, not the status codes: an object with a key 200 or
   * 304 gets a backing store for integer keys that long, kilobytes a variant.
   */
  sent?: { ok?: SentHeaders; notModified?: SentHeaders };
}

const SENT_KEY = { 200: 'ok', 304: 'notModified' } as const;

/** What a response of a representation was sent with, to send again without Fastify. */
export interface SentHeaders {
  /** Name, value, name, value, …: what writeHead takes fastest (no object to walk). */
  headers: readonly OutgoingHttpHeader[];
  /** The route pattern, for metrics and the request log. */
  route: string;
}

/** Headers that belong to one request or connection, never to a representation. */
const PER_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'x-request-id',
  'ratelimit',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

/** A cache hit found by request target, ready to be sent as it was sent before. */
export interface UrlHit {
  status: 200 | 304;
  /** Undefined for a 304. */
  body: Buffer | undefined;
  sent: SentHeaders;
  /** Records the hit (statistics and LRU recency); call it when the hit is answered. */
  count(): void;
}

export interface ServeOptions {
  /**
   * The request target alone (with Accept-Encoding and If-None-Match) picks the representation:
   * no other request header changes it. Such a representation, once sent, can be found by its
   * URL and sent again before Fastify (findByUrl, fast-path/early-answers.ts).
   */
  identifiedByUrl?: boolean;
  /**
   * With identifiedByUrl, for a route that negotiates its media type on Accept: the format this
   * request chose, and how any Accept header chooses. The target then names one representation
   * per format, and findByUrl picks the one the request's Accept chooses.
   */
  negotiated?: Negotiated;
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
  headers?: Readonly<Record<string, string>>;
  /** Bytes held for this entry: the identity body plus the compressed variants made so far. */
  bytes: number;
}

export interface CacheOptions {
  maxEntries: number;
  maxBytes: number;
  /**
   * Keep a representation only from its second miss within about `maxEntries` misses (true), or
   * from its first (false). See Doorkeeper.
   */
  admitOnSecondMiss?: boolean;
  cacheControl: string;
  /** The content version the representation belongs to; bumps invalidate everything. */
  currentVersion: () => number;
  /** Where the cache adds what it measures (its stats, size and bytes), for /metrics. */
  metrics?: MetricsTable;
}

/** Counters read by /metrics; plain numbers so the request path pays an increment, nothing more. */
export interface CacheStats {
  hits: number;
  /** Hits answered before Fastify (early-answers.ts), also counted in `hits`. */
  earlyHits: number;
  misses: number;
  /** Misses rendered and sent but not kept: their key had not missed before (see Doorkeeper). */
  declined: number;
  compressions: Record<ContentCoding, number>;
}

/** A miss's body up to this size (a guide) is compressed on the event loop, a larger one on zlib's thread pool (see serve()). */
const COMPRESS_IN_PLACE_MAX_BYTES = 16 * 1024;
const VARY = 'Accept, Accept-Encoding';
const JSON_TYPE = 'application/json; charset=utf-8';

export function createRepresentationCache(options: CacheOptions) {
  const doorkeeper = options.admitOnSecondMiss ? new Doorkeeper(options.maxEntries) : undefined;
  /** Request targets (as received) of representations identified by URL, and the cache key each names. */
  const urls = new UrlIndex();
  const stats: CacheStats = { hits: 0, earlyHits: 0, misses: 0, declined: 0, compressions: { br: 0, gzip: 0 } };

  // lru-cache keeps recency and the byte bound; a representation's size grows as its compressed
  // variants are made, so keepVariant sets it again to be counted.
  const entries = new LRUCache<string, Representation>({
    max: Math.max(1, options.maxEntries),
    ...(options.maxBytes > 0 ? { maxSize: options.maxBytes, sizeCalculation: (representation) => Math.max(1, representation.bytes) } : {}),
  });
  options.metrics?.add(
    {
      name: 'guides_cache_lookups_total',
      type: 'counter',
      label: 'result',
      read: () => ({ hit: stats.hits, miss: stats.misses }),
      help: 'Representation cache lookups, by result (hit: served from memory; miss: rendered from the database).',
    },
    {
      name: 'guides_cache_declined_total',
      type: 'counter',
      read: () => stats.declined,
      help: 'Misses not kept in the cache because their request had not missed recently (a one-off request; also counted as misses).',
    },
    {
      name: 'guides_early_answers_total',
      type: 'counter',
      read: () => stats.earlyHits,
      help: "Cache hits answered in the HTTP server's request listener, before Fastify (also counted as hits).",
    },
    { name: 'guides_cache_entries', type: 'gauge', read: () => entries.size, help: 'Representations held in the cache.' },
    {
      name: 'guides_cache_bytes',
      type: 'gauge',
      read: () => entries.calculatedSize,
      help: 'Bytes held by the cache (identity and compressed bodies).',
    },
    {
      name: 'guides_compressions_total',
      type: 'counter',
      label: 'coding',
      read: () => ({ br: stats.compressions.br, gzip: stats.compressions.gzip }),
      help: 'Cached representations compressed, by content coding (each at most once per content version).',
    },
  );

  function remember(key: string, representation: Representation): void {
    // RESPONSE_CACHE_MB=0 keeps nothing (lru-cache reads a maxSize of 0 as no bound).
    if (options.maxBytes <= 0) return;
    // Kept for long: in memory of its own size (see ownBytes), as the cache counts it. Compressed
    // variants come later, through keepVariant(), which does the same.
    representation.identity.body = ownBytes(representation.identity.body);
    entries.set(key, representation);
  }

  function build(version: number, rendered: Rendered, reply: FastifyReply): Representation {
    let body: Buffer;
    let contentType = JSON_TYPE;
    if ('body' in rendered) body = rendered.body;
    else {
      contentType = rendered.contentType ?? JSON_TYPE;
      const text =
        rendered.contentType !== undefined && typeof rendered.payload === 'string'
          ? rendered.payload
          : String(reply.serialize(rendered.payload));
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
      ...(rendered.headers ? { headers: rendered.headers } : {}),
      bytes: body.length,
    };
  }

  function variantOf(key: string, representation: Representation, coding: ContentCoding): Variant {
    return representation[coding] ?? keepVariant(key, representation, coding, compressBody(coding, representation.identity.body));
  }

  function keepVariant(key: string, representation: Representation, coding: ContentCoding, body: Buffer): Variant {
    const isCached = entries.peek(key) === representation;
    const variant: Variant = { body: isCached ? ownBytes(body) : body, etag: `${representation.identity.etag.slice(0, -1)}-${coding}"` };
    stats.compressions[coding] += 1;
    representation[coding] = variant;
    representation.bytes += variant.body.length;
    if (isCached) entries.set(key, representation);
    return variant;
  }

  /**
   * Remembers the request target, and the first time a variant is sent with a status, the headers
   * it went out with (as they are once every hook has run: read when the response has finished).
   */
  function learn(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
    variant: Variant,
    status: 200 | 304,
    negotiated: Negotiated | undefined,
  ): void {
    urls.remember(request.originalUrl, key, negotiated);
    const sentKey = SENT_KEY[status];
    if (variant.sent?.[sentKey] !== undefined) return;
    const route = request.routeOptions.url ?? request.url;
    reply.raw.once('finish', () => {
      if (reply.statusCode !== status) return;
      const headers: OutgoingHttpHeader[] = [];
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined && !PER_REQUEST_HEADERS.has(name)) headers.push(name, value);
      }
      variant.sent = { ...variant.sent, [sentKey]: { headers, route } };
    });
  }

  function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
    representation: Representation,
    serveOptions: ServeOptions,
  ): void {
    const coding = representation.isCompressible ? negotiateContentCoding(request.headers['accept-encoding']) : undefined;
    const variant = coding === undefined ? representation.identity : variantOf(key, representation, coding);
    reply.header('etag', variant.etag).header('cache-control', options.cacheControl).header('vary', VARY);
    if (representation.lastModified) reply.header('last-modified', representation.lastModified);
    if (representation.link) reply.header('link', representation.link);
    if (representation.headers) reply.headers(representation.headers);
    const status = ifNoneMatchHits(request.headers['if-none-match'], representation.etags) ? 304 : 200;
    // Only a kept representation can be found by URL again.
    if (serveOptions.identifiedByUrl && request.method === 'GET' && entries.peek(key) === representation) {
      learn(request, reply, key, variant, status, serveOptions.negotiated);
    }
    if (status === 304) {
      reply.code(304).send();
      return;
    }
    if (coding !== undefined) reply.header('content-encoding', coding);
    reply.type(representation.contentType).send(variant.body);
  }

  /** The representation under `key` if it is of the current content version. */
  function current(key: string): Representation | undefined {
    const cached = entries.peek(key);
    return cached !== undefined && cached.version === options.currentVersion() ? cached : undefined;
  }

  /** Counts a hit and makes its representation the most recently used. */
  function touch(key: string): void {
    stats.hits += 1;
    entries.get(key);
  }

  return {
    get size(): number {
      return entries.size;
    },
    get bytes(): number {
      return entries.calculatedSize;
    },
    stats,
    /** The Cache-Control of every cached representation, for responses made outside the cache. */
    cacheControl: options.cacheControl,
    /** The content version representations are made for now. */
    contentVersion: (): number => options.currentVersion(),
    clear(): void {
      entries.clear();
      urls.clear();
    },
    /**
     * A cached representation for a request target as received (`GET` only), the one its Accept
     * chooses where the route negotiates, in the variant the request's Accept-Encoding selects, as a
     * 200 or (If-None-Match) a 304, if it has been sent that way before; else undefined, and the
     * request goes the ordinary way. Synchronous.
     */
    findByUrl(
      url: string,
      accept: string | undefined,
      acceptEncoding: string | undefined,
      ifNoneMatch: string | undefined,
    ): UrlHit | undefined {
      const key = urls.keyOf(url, accept);
      if (key === undefined) return undefined;
      const representation = current(key);
      if (representation === undefined) {
        urls.forget(url);
        return undefined;
      }
      const coding = representation.isCompressible ? negotiateContentCoding(acceptEncoding) : undefined;
      const variant = coding === undefined ? representation.identity : representation[coding];
      const status = ifNoneMatchHits(ifNoneMatch, representation.etags) ? 304 : 200;
      const sent = variant?.sent?.[SENT_KEY[status]];
      if (variant === undefined || sent === undefined) return undefined;
      return {
        status,
        body: status === 200 ? variant.body : undefined,
        sent,
        count: () => {
          stats.earlyHits += 1;
          touch(key);
        },
      };
    },
    /**
     * Answers from the cache, or renders, caches and answers. `key` must identify the representation
     * fully. A hit is answered synchronously (no promise, no microtask turn); a miss returns the
     * promise of its rendering.
     */
    serve(
      request: FastifyRequest,
      reply: FastifyReply,
      key: string,
      render: () => Promise<Rendered>,
      serveOptions: ServeOptions = {},
    ): Promise<void> | undefined {
      const version = options.currentVersion();
      const cached = current(key);
      if (cached !== undefined) {
        touch(key);
        answer(request, reply, key, cached, serveOptions);
        return undefined;
      }
      stats.misses += 1;
      const isAdmitted = doorkeeper?.admit(key) ?? true;
      // Loaded once per thread (representation.ts); a resolved promise after the app's start.
      return loadRepresentationHash()
        .then(render)
        .then(async (rendered) => {
          const representation = build(version, rendered, reply);
          if (isAdmitted) remember(key, representation);
          else stats.declined += 1;
          if ('encoded' in rendered && rendered.encoded && representation.isCompressible) {
            keepVariant(key, representation, rendered.encoded.coding, rendered.encoded.body);
          }
          // A miss compresses a body of up to COMPRESS_IN_PLACE_MAX_BYTES (a guide, a short page)
          // in place, a larger one (a page of 50 guides) on zlib's thread pool, so
          // that it does not hold up every other request. The pool costs about twice the CPU of the
          // compression itself (hand-off, stream machinery, memory faulted in on its threads), which on
          // a busy or one-CPU server is CPU taken from everything else. (A hit asking for a coding not
          // made yet compresses in place: rare, and then kept.)
          const coding = representation.isCompressible ? negotiateContentCoding(request.headers['accept-encoding']) : undefined;
          if (coding !== undefined && !representation[coding]) {
            const { body } = representation.identity;
            const compressed =
              body.length <= COMPRESS_IN_PLACE_MAX_BYTES ? compressBody(coding, body) : await compressBodyOffLoop(coding, body);
            if (!representation[coding]) keepVariant(key, representation, coding, compressed);
          }
          answer(request, reply, key, representation, serveOptions);
        });
    },
  };
}

export type RepresentationCache = ReturnType<typeof createRepresentationCache>;

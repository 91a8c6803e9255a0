/**
 * Representation cache and HTTP validators. A successful GET is rendered once per content
 * version: serialized with the route's schema, hashed into a strong ETag, and kept in a bounded
 * LRU. Later requests (and every instance sharing the database) get the same bytes and ETag;
 * If-None-Match then costs a map lookup. Only 200s pass through here, so errors never carry
 * an ETag and can never become a 304.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface Rendered {
  payload: unknown;
  lastModified?: string;
  link?: string;
  /** For non-JSON representations (llms.txt, HTML): the media type; `payload` is then the body text as is. */
  contentType?: string;
}

interface Representation {
  version: number;
  body: string;
  etag: string;
  lastModified?: string;
  link?: string;
  contentType?: string;
}

export interface CacheOptions {
  maxEntries: number;
  maxBytes: number;
  cacheControl: string;
  /** The content version the representation belongs to; bumps invalidate everything. */
  currentVersion: () => number;
}

/** Parses If-None-Match (a list, `*`, weak or strong tags) and applies the weak comparison (RFC 9110 §13.1.2). */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

export function createRepresentationCache(options: CacheOptions) {
  const entries = new Map<string, Representation>();
  let bytes = 0;

  function remember(key: string, representation: Representation): void {
    const previous = entries.get(key);
    if (previous) {
      bytes -= previous.body.length;
      entries.delete(key);
    }
    entries.set(key, representation);
    bytes += representation.body.length;
    for (const [oldKey, old] of entries) {
      if (entries.size <= options.maxEntries && bytes <= options.maxBytes) break;
      entries.delete(oldKey);
      bytes -= old.body.length;
    }
  }

  return {
    get size(): number {
      return entries.size;
    },
    clear(): void {
      entries.clear();
      bytes = 0;
    },
    /** Answers from the cache, or renders, caches and answers. `key` must identify the representation fully. */
    async serve(request: FastifyRequest, reply: FastifyReply, key: string, render: () => Promise<Rendered>): Promise<void> {
      const version = options.currentVersion();
      const cached = entries.get(key);
      let representation: Representation;
      if (cached && cached.version === version) {
        representation = cached;
        // Refresh recency for the LRU.
        entries.delete(key);
        entries.set(key, representation);
      } else {
        const rendered = await render();
        const body = rendered.contentType !== undefined && typeof rendered.payload === 'string'
          ? rendered.payload
          : String(reply.serialize(rendered.payload));
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
        representation = { version, body, etag, lastModified: rendered.lastModified, link: rendered.link, contentType: rendered.contentType };
        remember(key, representation);
      }
      reply.header('etag', representation.etag).header('cache-control', options.cacheControl).header('vary', 'Accept, Accept-Encoding');
      if (representation.lastModified) reply.header('last-modified', representation.lastModified);
      if (representation.link) reply.header('link', representation.link);
      if (ifNoneMatchHits(request.headers['if-none-match'], representation.etag)) {
        reply.code(304).send();
        return;
      }
      reply.type(representation.contentType ?? 'application/json; charset=utf-8').send(representation.body);
    },
  };
}

export type RepresentationCache = ReturnType<typeof createRepresentationCache>;

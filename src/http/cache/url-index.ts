/**
 * The request targets of cached representations that the target alone identifies, so that a
 * request can be answered from the cache before Fastify (findByUrl in representation-cache.ts,
 * fast-path/early-answers.ts). It maps a target, as received, to the cache key it names (or, where
 * the route negotiates its media type on Accept, to one key per format), and holds nothing else:
 * a key whose representation has left the cache is forgotten when it is looked up.
 */
import { LRUCache } from 'lru-cache';

/** How a route that negotiates its media type chose for this request, and how any Accept header chooses. */
export interface Negotiated {
  format: string;
  choose(accept: string | undefined): string;
}

/** What a request target names: a cache key, or one per negotiated format. */
type UrlTarget = string | { choose: Negotiated['choose']; keys: Map<string, string> };

/** Request targets remembered, and their characters in all; beyond either the oldest are forgotten. */
const MAX_URLS = 10_000;
const MAX_URL_CHARACTERS = 2 * 1024 * 1024;

export class UrlIndex {
  // Read with peek only, which leaves the order alone: the oldest target is forgotten first.
  private readonly targets = new LRUCache<string, UrlTarget>({
    max: MAX_URLS,
    maxSize: MAX_URL_CHARACTERS,
    sizeCalculation: (_target, url) => Math.max(1, url.length),
  });

  /** Remembers that `url` names `key` (for the format `negotiated` chose, where the route negotiates). */
  remember(url: string, key: string, negotiated: Negotiated | undefined): void {
    const known = this.targets.peek(url);
    if (known === undefined) {
      this.targets.set(url, negotiated === undefined ? key : { choose: negotiated.choose, keys: new Map([[negotiated.format, key]]) });
    } else if (negotiated !== undefined && typeof known === 'object') {
      known.keys.set(negotiated.format, key);
    }
  }

  /** The cache key `url` names for a request with this Accept header, if it is remembered. */
  keyOf(url: string, accept: string | undefined): string | undefined {
    const target = this.targets.peek(url);
    return typeof target === 'object' ? target.keys.get(target.choose(accept)) : target;
  }

  forget(url: string): void {
    this.targets.delete(url);
  }

  clear(): void {
    this.targets.clear();
  }
}

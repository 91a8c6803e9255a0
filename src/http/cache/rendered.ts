/** What a route hands the representation cache to keep and send (representation-cache.ts). */
import type { ContentCoding } from '../../representation/representation.js';

/** A representation as a route renders it: a payload to serialize with the route's schema, or the body itself. */
export type Rendered = RenderedCommon &
  (
    | {
        payload: unknown;
        /** For non-JSON representations (llms.txt, HTML): the media type; `payload` is then the body text as is. */
        contentType?: string;
      }
    | {
        /** JSON bytes made already (representation/), possibly on another thread. */
        body: Buffer;
        /** representationHash(body), when it was computed with the body. */
        hash?: string;
        /** The body already compressed with one coding, kept as that coding's variant. */
        encoded?: { coding: ContentCoding; body: Buffer };
      }
  );

interface RenderedCommon {
  lastModified?: string;
  link?: string;
  /** Other headers of this representation (X-Markdown-Tokens), by lowercase name. */
  headers?: Readonly<Record<string, string>>;
}

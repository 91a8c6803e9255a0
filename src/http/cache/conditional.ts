/** Conditional requests: If-None-Match against the ETags of a representation. */

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

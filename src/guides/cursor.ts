/**
 * Opaque, signed pagination cursors. A cursor is a keyset position (never an offset), serialized
 * as compact JSON, base64url-encoded and followed by a truncated HMAC-SHA256 over it. The first key
 * signs; every key verifies, so keys can be rotated without breaking clients mid-walk.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Position after the last guide of a page ordered by publishedAt desc, slug asc. */
export interface ListPosition {
  publishedMs: number;
  slug: string;
}

/** Position after the last guide of a search page ordered by score asc, then as ListPosition. */
export interface SearchPosition extends ListPosition {
  score: number;
}

export type CursorPayload = { kind: 'list'; after: ListPosition } | { kind: 'search'; q: string; after: SearchPosition };

export interface CursorCodec {
  encode(payload: CursorPayload): string;
  /** The key that signs (the first one): a search worker thread signs with it too. */
  readonly signingKey: Buffer;
  /** The payload, or undefined for anything altered, truncated, forged or signed by another key. */
  decode(token: string): CursorPayload | undefined;
}

const VERSION = 1;
const MAC_BYTES = 16;
const MAX_TOKEN_LENGTH = 2048;
const TOKEN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function mac(key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);
}

function toPayload(value: unknown): CursorPayload | undefined {
  if (!Array.isArray(value) || value[0] !== VERSION) return undefined;
  const [, kind, ...rest] = value as unknown[];
  const isPosition = (ms: unknown, slug: unknown): ms is number => Number.isSafeInteger(ms) && typeof slug === 'string' && slug.length > 0;
  if (kind === 'l' && rest.length === 2 && isPosition(rest[0], rest[1])) {
    return { kind: 'list', after: { publishedMs: rest[0], slug: rest[1] as string } };
  }
  if (kind === 's' && rest.length === 4) {
    const [q, score, ms, slug] = rest;
    if (typeof q === 'string' && typeof score === 'number' && Number.isFinite(score) && isPosition(ms, slug)) {
      return { kind: 'search', q, after: { score, publishedMs: ms, slug: slug as string } };
    }
  }
  return undefined;
}

export function createCursorCodec(keys: readonly Buffer[]): CursorCodec {
  const signingKey = keys[0];
  if (!signingKey) throw new Error('a cursor codec needs at least one key');
  return {
    signingKey,
    encode(payload) {
      const fields =
        payload.kind === 'list'
          ? [VERSION, 'l', payload.after.publishedMs, payload.after.slug]
          : [VERSION, 's', payload.q, payload.after.score, payload.after.publishedMs, payload.after.slug];
      const body = Buffer.from(JSON.stringify(fields)).toString('base64url');
      return `${body}.${mac(signingKey, body).toString('base64url')}`;
    },
    decode(token) {
      if (token.length > MAX_TOKEN_LENGTH || !TOKEN.test(token)) return undefined;
      const [body = '', signature = ''] = token.split('.');
      const given = Buffer.from(signature, 'base64url');
      // Re-encoding must give the same text: rejects non-canonical base64url variants of a valid token.
      if (given.length !== MAC_BYTES || given.toString('base64url') !== signature) return undefined;
      if (!keys.some((key) => timingSafeEqual(mac(key, body), given))) return undefined;
      try {
        return toPayload(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
      } catch {
        return undefined;
      }
    },
  };
}

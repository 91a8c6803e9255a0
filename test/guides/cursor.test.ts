import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/guides/cursor.js';
import type { CursorPayload } from '../../src/guides/cursor.js';

const keyA = Buffer.from('a'.repeat(32));
const keyB = Buffer.from('b'.repeat(32));
const list: CursorPayload = { kind: 'list', after: { publishedMs: 1_767_225_600_000, slug: 'reduce-food-waste' } };
const search: CursorPayload = {
  kind: 'search',
  q: 'food "cold chain"',
  after: { score: -3.25, publishedMs: 1_767_225_600_000, slug: 'b' },
};

describe('cursor codec', () => {
  it('round-trips list and search positions', () => {
    const codec = createCursorCodec([keyA]);
    expect(codec.decode(codec.encode(list))).toEqual(list);
    expect(codec.decode(codec.encode(search))).toEqual(search);
  });

  it('refuses a cursor signed by another deployment', () => {
    const token = createCursorCodec([keyB]).encode(list);
    expect(createCursorCodec([keyA]).decode(token)).toBeUndefined();
  });

  it('signs with the first key and verifies with every key, so keys rotate without breaking walks', () => {
    const old = createCursorCodec([keyA]).encode(list);
    const rotated = createCursorCodec([keyB, keyA]);
    expect(rotated.decode(old)).toEqual(list);
    expect(rotated.signingKey).toBe(keyB);
    expect(createCursorCodec([keyB]).decode(rotated.encode(list))).toEqual(list);
  });

  it('refuses altered, truncated and non-canonical tokens', () => {
    const codec = createCursorCodec([keyA]);
    const token = codec.encode(search);
    const [body = '', mac = ''] = token.split('.');
    const flip = (s: string, i: number): string => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const altered = [
      flip(body, 3) + '.' + mac,
      body + '.' + flip(mac, 2),
      token.slice(0, -1),
      body,
      `${body}.`,
      `.${mac}`,
      `${token}.x`,
      '',
    ];
    for (const candidate of altered) expect(codec.decode(candidate)).toBeUndefined();
    expect(codec.decode('x'.repeat(3000) + '.' + mac)).toBeUndefined();
  });

  it('refuses a correctly signed body that is not a cursor payload', () => {
    // Signed as the codec signs (truncated HMAC-SHA256), so only the payload check can refuse them.
    const signed = (fields: unknown): string => {
      const body = Buffer.from(JSON.stringify(fields)).toString('base64url');
      return `${body}.${createHmac('sha256', keyA).update(body).digest().subarray(0, 16).toString('base64url')}`;
    };
    const codec = createCursorCodec([keyA]);
    expect(codec.decode(signed([1, 'l', 1, 'x']))).toEqual({ kind: 'list', after: { publishedMs: 1, slug: 'x' } });
    for (const fields of [
      [2, 'l', 1, 'x'],
      [1, 'l', 1.5, 'x'],
      [1, 'l', 1, ''],
      [1, 's', 'q', 'NaN', 1, 'x'],
      [1, 'x', 1, 'x'],
      { v: 1 },
      'text',
    ]) {
      expect(codec.decode(signed(fields))).toBeUndefined();
    }
  });

  it('needs a key', () => {
    expect(() => createCursorCodec([])).toThrow(/at least one key/);
  });
});

/** The URL index of the representation cache: what a request target names, and its bounds. */
import { describe, expect, it } from 'vitest';
import { UrlIndex } from '../../../src/http/cache/url-index.js';

const byAccept = (accept: string | undefined): string => (accept?.includes('text/markdown') ? 'markdown' : 'json');

describe('UrlIndex', () => {
  it('gives the key a target was remembered with, until it is forgotten or cleared', () => {
    const index = new UrlIndex();
    index.remember('/api/v1/product', 'product', undefined);
    index.remember('/api/v1/guides?limit=5', 'guides-5', undefined);
    expect(index.keyOf('/api/v1/product', undefined)).toBe('product');
    expect(index.keyOf('/api/v1/product?', undefined)).toBeUndefined();
    index.forget('/api/v1/product');
    expect(index.keyOf('/api/v1/product', undefined)).toBeUndefined();
    expect(index.keyOf('/api/v1/guides?limit=5', undefined)).toBe('guides-5');
    index.clear();
    expect(index.keyOf('/api/v1/guides?limit=5', undefined)).toBeUndefined();
  });

  it('keeps one key per negotiated format of a target, and gives the one the Accept header chooses', () => {
    const index = new UrlIndex();
    const url = '/api/v1/guides/reduce-food-waste';
    index.remember(url, 'guide-json', { format: 'json', choose: byAccept });
    expect(index.keyOf(url, 'text/markdown')).toBeUndefined();
    index.remember(url, 'guide-md', { format: 'markdown', choose: byAccept });
    expect(index.keyOf(url, 'text/markdown')).toBe('guide-md');
    expect(index.keyOf(url, undefined)).toBe('guide-json');
  });

  it('forgets the oldest targets beyond 10,000, even one just looked up', () => {
    const index = new UrlIndex();
    for (let i = 0; i < 10_000; i += 1) index.remember(`/api/v1/guides/g-${i}`, `k-${i}`, undefined);
    expect(index.keyOf('/api/v1/guides/g-0', undefined)).toBe('k-0');
    index.remember('/api/v1/guides/g-10000', 'k-10000', undefined);
    expect(index.keyOf('/api/v1/guides/g-0', undefined)).toBeUndefined();
    expect(index.keyOf('/api/v1/guides/g-1', undefined)).toBe('k-1');
    expect(index.keyOf('/api/v1/guides/g-10000', undefined)).toBe('k-10000');
  });

  it('forgets the oldest targets beyond 2 MiB of characters in all', () => {
    const index = new UrlIndex();
    const long = (name: string): string => `/api/v1/guides?q=${name.padEnd(600 * 1024, 'x')}`;
    for (const name of ['a', 'b', 'c']) index.remember(long(name), name, undefined);
    expect(index.keyOf(long('a'), undefined)).toBe('a');
    index.remember(long('d'), 'd', undefined);
    expect(index.keyOf(long('a'), undefined)).toBeUndefined();
    expect(['b', 'c', 'd'].map((name) => index.keyOf(long(name), undefined))).toEqual(['b', 'c', 'd']);
  });
});

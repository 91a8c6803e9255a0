import { describe, expect, it } from 'vitest';
import { parseSearchQuery } from '../../src/guides/search-query.js';

const terms = (text: string): Array<[string[], boolean]> => parseSearchQuery(text).terms.map((t) => [t.words, t.isPrefix]);

describe('parseSearchQuery', () => {
  it('keeps the trimmed text for cursors and splits words on anything but letters, digits and marks', () => {
    const query = parseSearchQuery('  food-waste & prep_list  ');
    expect(query.text).toBe('food-waste & prep_list');
    expect(terms(query.text)).toEqual([
      [['food'], false],
      [['waste'], false],
      [['prep'], false],
      [['list'], true],
    ]);
  });

  it('lowercases and NFKC-normalizes words, keeping diacritics for the store to fold', () => {
    expect(terms('CAFÉ ﬁsh')).toEqual([
      [['café'], false],
      [['fish'], true],
    ]);
  });

  it('makes a phrase of quoted words and never a prefix of a closing phrase', () => {
    expect(terms('"cold chain" storage')).toEqual([
      [['cold', 'chain'], false],
      [['storage'], true],
    ]);
    expect(terms('storage "cold chain"')).toEqual([
      [['storage'], false],
      [['cold', 'chain'], false],
    ]);
  });

  it('runs an unclosed quote to the end as a phrase', () => {
    expect(terms('menu "allergen label')).toEqual([
      [['menu'], false],
      [['allergen', 'label'], false],
    ]);
  });

  it('gives no terms for text that has no words, whatever its operators or quotes', () => {
    for (const text of ['', '   ', '""', '" "', '*:() -+~^', "'; --"]) {
      expect(parseSearchQuery(text).terms).toEqual([]);
    }
  });

  it('treats engine operators as plain words, so no input is ever an operator', () => {
    expect(terms('salt NEAR pepper* OR NOT')).toEqual([
      [['salt'], false],
      [['near'], false],
      [['pepper'], false],
      [['or'], false],
      [['not'], true],
    ]);
  });
});

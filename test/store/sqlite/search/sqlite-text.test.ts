/** The embedded index's analyzer: what a guide's text and a query's words become as tokens. */
import { describe, expect, it } from 'vitest';
import { stemWord, tokenize, tokensOfWord, wordTokens } from '../../../../src/store/sqlite/search/sqlite-text.js';

describe('stemWord', () => {
  it("reduces English words as Porter's reference implementation does", () => {
    const stems: Record<string, string> = {
      caresses: 'caress',
      ponies: 'poni',
      agreed: 'agre',
      hopping: 'hop',
      filing: 'file',
      happy: 'happi',
      relational: 'relat',
      generalizations: 'gener',
      hopeful: 'hope',
      electrical: 'electr',
      adjustment: 'adjust',
      controlling: 'control',
      // The reference implementation's departures from the paper, which SQLite's tokenizer shares.
      sensibility: 'sensibl',
      archaeology: 'archaeolog',
      // An initial y is a consonant.
      yelling: 'yell',
    };
    expect(Object.fromEntries(Object.keys(stems).map((word) => [word, stemWord(word)]))).toEqual(stems);
  });

  it('leaves words with digits, and words shorter than 3 or longer than 64 letters, as they are', () => {
    const long = `${'ab'.repeat(32)}ing`;
    expect([stemWord('12th'), stemWord('cooking2'), stemWord('is'), stemWord(long)]).toEqual(['12th', 'cooking2', 'is', long]);
  });
});

describe('tokens of a word', () => {
  it('folds case and diacritics before stemming, for guides and queries alike', () => {
    expect(tokensOfWord('Cafés')).toEqual(['cafe']);
    expect(wordTokens('CRÈMES')).toEqual(['creme']);
    expect(wordTokens('Cafés')).toEqual(tokensOfWord('Cafés'));
  });

  it('splits what normalization splits, and keeps scripts other than Latin unstemmed', () => {
    expect(tokensOfWord('½')).toEqual(['1', '2']);
    expect(wordTokens('寿司')).toEqual(['寿司']);
  });

  it('reads words between punctuation, markup and entities', () => {
    expect(tokenize('Fish & chips: the **sauces**, 3_000 pans')).toEqual(['fish', 'chip', 'the', 'sauc', '3', '000', 'pan']);
  });
});

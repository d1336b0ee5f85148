import { describe, expect, it } from 'vitest';
import { searchTerms, searchWords } from './terms.js';

describe('searchWords and searchTerms', () => {
  it('keeps the words that say what a text is about, lowercased and stemmed', () => {
    expect(searchWords('What did Caroline research?')).toEqual(['caroline', 'research']);
    expect(searchTerms('Researching adoption agencies — a dream!')).toEqual([
      'research',
      'adopt',
      'agenc',
      'dream',
    ]);
  });

  it('splits on anything but letters and digits, in any script, and keeps numbers', () => {
    expect(searchWords("order #W123 ships 3 days from Zürich's 東京 hub")).toEqual([
      'order',
      'w123',
      'ships',
      '3',
      'days',
      'zürich',
      '東京',
      'hub',
    ]);
  });

  it('cuts absurdly long words so one base64 blob cannot bloat an index', () => {
    const [word] = searchWords('x'.repeat(5_000));
    expect(word).toHaveLength(40);
  });

  it('gives nothing for a text of stopwords and punctuation', () => {
    expect(searchTerms('... and then, what was it that you had?')).toEqual([]);
  });
});

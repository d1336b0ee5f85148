import { describe, expect, it } from 'vitest';
import { stem } from './stem.js';

describe('stem', () => {
  it('follows the steps of Porter’s paper on its own examples', () => {
    const cases: Record<string, string> = {
      caresses: 'caress',
      ponies: 'poni',
      cats: 'cat',
      feed: 'feed',
      agreed: 'agre',
      plastered: 'plaster',
      motoring: 'motor',
      sing: 'sing',
      conflated: 'conflat',
      hopping: 'hop',
      falling: 'fall',
      filing: 'file',
      happy: 'happi',
      relational: 'relat',
      conditional: 'condit',
      digitizer: 'digit',
      triplicate: 'triplic',
      hopeful: 'hope',
      goodness: 'good',
      revival: 'reviv',
      adjustment: 'adjust',
      adoption: 'adopt',
      controll: 'control',
      generalizations: 'gener',
    };
    for (const [word, expected] of Object.entries(cases)) expect(stem(word), word).toBe(expected);
  });

  it('brings the forms of one word together', () => {
    const forms = ['research', 'researching', 'researched', 'researches'];
    expect(new Set(forms.map(stem)).size).toBe(1);
    expect(stem('agencies')).toBe(stem('agency'));
    expect(stem('painting')).toBe(stem('paint'));
  });

  it('leaves short words, numbers and other scripts as they are', () => {
    for (const word of ['is', 'a', '2023', 'w123', 'çà', '漢字', 'Caps']) expect(stem(word)).toBe(word);
  });
});

import { cutAtWord, packSentences, sentences } from '../../../service/content/sentences';

describe('the sentence cutter (service/content/sentences.ts)', () => {
  it('splits at sentence ends and line breaks', () => {
    expect(sentences('One. Two!  Three?\n\nFour\nfive')).toEqual(['One.', 'Two!', 'Three?', 'Four', 'five']);
  });

  it('cuts at a word end with an ellipsis', () => {
    expect(cutAtWord('short', 10)).toBe('short');
    expect(cutAtWord('alpha beta gamma delta', 12)).toBe('alpha beta…');
  });

  it('packs every sentence once, in order, within the budget, up to maxRuns', () => {
    const s = ['aaaa.', 'bbbb.', 'cccc.', 'dddd.'];
    expect(packSentences(s, 11)).toEqual(['aaaa. bbbb.', 'cccc. dddd.']);
    expect(packSentences(s, 11, 1)).toEqual(['aaaa. bbbb.']);
    expect(packSentences(['one two three four'], 9)).toEqual(['one two', 'three', 'four']);
    expect(packSentences([], 10)).toEqual([]);
  });
});

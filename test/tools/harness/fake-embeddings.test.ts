import { fakeEmbedding, fakeEmbeddingTokens } from '../../../tools/harness/fake-embeddings';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

describe('the fake provider’s vectors (tools/harness/fake-embeddings.ts)', () => {
  it('are deterministic unit vectors of the length asked', () => {
    const v = fakeEmbedding('The quick brown fox', 64);
    expect(v).toHaveLength(64);
    expect(Array.from(fakeEmbedding('The quick brown fox', 64))).toEqual(Array.from(v));
    expect(cosine(v, v)).toBeCloseTo(1, 5);
    expect(cosine(fakeEmbedding('', 16), fakeEmbedding('the a', 16))).toBeCloseTo(1, 5);
  });

  it('put synonyms together and unrelated words apart: "car" is "automobile", not "banana"', () => {
    const car = fakeEmbedding('car', 64);
    expect(cosine(car, fakeEmbedding('automobile', 64))).toBeCloseTo(1, 5);
    expect(cosine(car, fakeEmbedding('Cars', 64))).toBeCloseTo(1, 5);
    expect(cosine(fakeEmbedding('buying a car', 64), fakeEmbedding('automobile purchase', 64))).toBeCloseTo(1, 5);
    expect(cosine(car, fakeEmbedding('banana', 64))).toBeLessThan(0.5);
    expect(cosine(fakeEmbedding('a fast car', 64), fakeEmbedding('a quick automobile', 64))).toBeGreaterThan(
      cosine(fakeEmbedding('a fast car', 64), fakeEmbedding('a ripe banana', 64)),
    );
  });

  it('bill a token a word, at least one a text', () => {
    expect(fakeEmbeddingTokens(['one two  three', 'x', '...'])).toBe(5);
  });
});

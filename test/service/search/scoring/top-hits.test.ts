import { byRank, topHits, type Scored } from '../../../../service/search/scoring/top-hits';

describe('topHits', () => {
  // Deterministic pseudo-random scores with many ties, so the id tie-break is exercised.
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const hits: Scored[] = Array.from({ length: 2000 }, (_, i) => ({
    id: `d${(i * 7919) % 2000}`,
    score: Math.floor(next() * 50) / 10,
  }));
  const sorted = [...hits].sort(byRank);

  it.each([0, 1, 10, 37, 499, 500, 1999, 2000, 5000])('k = %d is the head of the full sort', (k) => {
    expect(topHits(hits, k)).toEqual(sorted.slice(0, k));
  });

  it('leaves its input alone', () => {
    const copy = [...hits];
    topHits(hits, 10);
    expect(hits).toEqual(copy);
  });

  it('orders by score, then id ascending', () => {
    expect(
      topHits(
        [
          { id: 'b', score: 1 },
          { id: 'a', score: 1 },
          { id: 'c', score: 2 },
        ],
        3,
      ).map((h) => h.id),
    ).toEqual(['c', 'a', 'b']);
  });
});

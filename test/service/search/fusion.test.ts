import fc from 'fast-check';
import { fuse, RRF_K, type ScoredId } from '../../../service/search/fusion';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

const ids = (xs: Array<{ id: string }>) => xs.map((x) => x.id);

describe('fuse', () => {
  const keyword: ScoredId[] = [
    { id: 'a', score: 12 },
    { id: 'b', score: 8 },
    { id: 'c', score: 2 },
  ];
  const semantic: ScoredId[] = [
    { id: 'c', score: 0.9 },
    { id: 'd', score: 0.7 },
    { id: 'a', score: 0.1 },
  ];

  test('rrf: each list adds weight / (k + rank), k = 60 by default', () => {
    const got = fuse(keyword, semantic, { ratio: 0.5, method: 'rrf' });
    const want = (kw?: number, sem?: number) => (kw ? 0.5 / (RRF_K + kw) : 0) + (sem ? 0.5 / (RRF_K + sem) : 0);
    expect(got).toEqual([
      { id: 'a', score: want(1, 3), keywordRank: 1, semanticRank: 3 },
      { id: 'c', score: want(3, 1), keywordRank: 3, semanticRank: 1 },
      { id: 'b', score: want(2), keywordRank: 2 },
      { id: 'd', score: want(undefined, 2), semanticRank: 2 },
    ]);
    // a and c have the same fused score (ranks 1 + 3 and 3 + 1): the tie goes by id
    expect(got[0].score).toBe(got[1].score);
  });

  test('equal scores within a list are ranked by id', () => {
    const got = fuse(
      [
        { id: 'x', score: 1 },
        { id: 'y', score: 1 },
      ],
      [],
      { ratio: 0, method: 'rrf' },
    );
    expect(ids(got)).toEqual(['x', 'y']);
    expect(got[0].score).toBeGreaterThan(got[1].score); // ranks 1 and 2 by id within the list
  });

  test('normalized: min-max per list, then (1 - ratio) * keyword + ratio * semantic', () => {
    const got = fuse(keyword, semantic, { ratio: 0.25, method: 'normalized' });
    const kw = (s: number) => (s - 2) / 10;
    const sem = (s: number) => (s - 0.1) / 0.8;
    const byId = new Map(got.map((g) => [g.id, g.score]));
    expect(byId.get('a')).toBeCloseTo(0.75 * kw(12) + 0.25 * sem(0.1), 12);
    expect(byId.get('b')).toBeCloseTo(0.75 * kw(8), 12);
    expect(byId.get('c')).toBeCloseTo(0.75 * kw(2) + 0.25 * sem(0.9), 12);
    expect(byId.get('d')).toBeCloseTo(0.25 * sem(0.7), 12);
    expect(ids(got)).toEqual(['a', 'b', 'c', 'd']);
  });

  test('normalized: one distinct score in a list normalises to 1', () => {
    const got = fuse([{ id: 'a', score: 3 }], [{ id: 'b', score: 0.4 }], { ratio: 0.5, method: 'normalized' });
    expect(got).toEqual([
      { id: 'a', score: 0.5, keywordRank: 1 },
      { id: 'b', score: 0.5, semanticRank: 1 },
    ]);
  });

  test("normalized, keyword scale 'best': keyword scores over the best one (min 0); ties by keyword score, then id", () => {
    const got = fuse(keyword, semantic, { ratio: 0.25, method: 'normalized', keywordScale: 'best' });
    const sem = (s: number) => (s - 0.1) / 0.8;
    const byId = new Map(got.map((g) => [g.id, g.score]));
    expect(byId.get('a')).toBeCloseTo(0.75 + 0.25 * sem(0.1), 12);
    expect(byId.get('b')).toBeCloseTo(0.75 * (8 / 12), 12);
    expect(byId.get('c')).toBeCloseTo(0.75 * (2 / 12) + 0.25 * sem(0.9), 12);
    expect(byId.get('d')).toBeCloseTo(0.25 * sem(0.7), 12);
    // Ratio 1: every keyword match scores its semantic part alone; those of none keep keyword order, not id order.
    const one = fuse(
      [
        { id: 'a', score: 1 },
        { id: 'z', score: 3 },
        { id: 'm', score: 2 },
      ],
      [{ id: 'q', score: 0.5 }],
      { ratio: 1, method: 'normalized', keywordScale: 'best' },
    );
    expect(one.map((g) => [g.id, g.score])).toEqual([
      ['q', 1],
      ['z', 0],
      ['m', 0],
      ['a', 0],
    ]);
  });

  test('ratio 0 is the keyword ranking, ratio 1 the semantic ranking (the other list only breaks ties)', () => {
    for (const method of ['rrf', 'normalized'] as const) {
      expect(ids(fuse(keyword, semantic, { ratio: 0, method })).slice(0, 3)).toEqual(['a', 'b', 'c']);
      expect(ids(fuse(keyword, semantic, { ratio: 1, method })).slice(0, 3)).toEqual(['c', 'd', 'a']);
    }
  });

  test('an id listed twice in one list counts once, at its best score', () => {
    const got = fuse(
      [
        { id: 'a', score: 1 },
        { id: 'a', score: 5 },
        { id: 'b', score: 3 },
      ],
      [],
      { ratio: 0, method: 'rrf' },
    );
    expect(got.map((g) => [g.id, g.keywordRank])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });

  test('bad options and scores are RangeErrors', () => {
    expect(() => fuse([], [], { ratio: 1.5, method: 'rrf' })).toThrow(RangeError);
    expect(() => fuse([], [], { ratio: NaN, method: 'rrf' })).toThrow(RangeError);
    expect(() => fuse([], [], { ratio: 0.5, method: 'rrf', k: 0 })).toThrow(RangeError);
    expect(() => fuse([{ id: 'a', score: NaN }], [], { ratio: 0.5, method: 'rrf' })).toThrow(/keyword score of a/);
    expect(fuse([], [], { ratio: 0.5, method: 'normalized' })).toEqual([]);
  });

  const list = fc.array(
    fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), score: fc.integer({ min: -5, max: 5 }) }),
    { maxLength: 10 },
  );

  test(
    'property: every id of either list once, sorted by score then id, the same for any input order',
    () => {
      fc.assert(
        fc.property(
          list,
          list,
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.constantFrom('rrf' as const, 'normalized' as const),
          (kw, sem, ratio, method) => {
            const got = fuse(kw, sem, { ratio, method });
            expect(new Set(ids(got))).toEqual(new Set([...ids(kw), ...ids(sem)]));
            expect(got).toHaveLength(new Set(ids(got)).size);
            for (let i = 1; i < got.length; i++) {
              const [p, q] = [got[i - 1], got[i]];
              expect(p.score > q.score || (p.score === q.score && p.id < q.id)).toBe(true);
            }
            expect(fuse([...kw].reverse(), [...sem].reverse(), { ratio, method })).toEqual(got);
          },
        ),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS, // a hang guard only; the test is bounded by numRuns
  );
});

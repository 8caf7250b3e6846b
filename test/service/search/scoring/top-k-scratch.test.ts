import { scoreCursor, type ScoreCursor } from '../../../../service/search/index/cursor';
import { TopKScratch } from '../../../../service/search/scoring/top-k-scratch';

/** A cursor over `docs` (nothing but its documents is read by `grow`). */
const over = (docs: number[]): ScoreCursor =>
  scoreCursor({
    docs: Int32Array.from(docs),
    tfs: [],
    idf: [],
    scoring: { lengths: new Int32Array(0), nf: 1, fields: [], avg: [], k: 0.6, b: 0.6, d: 1 },
    factors: [],
    bound: 1,
    distinct: true,
  });

describe('TopKScratch', () => {
  it('sizes the accumulators for the index ahead of a query: windows of it make no new ones', () => {
    const s = new TopKScratch();
    s.reserve(1000);
    const { score, distinct, seen } = s;
    expect([score.length, distinct.length, seen.length]).toEqual([1000, 1000, 1000]);
    // A windowed pass's windows in increasing ranges of documents, each to its own last one.
    for (const last of [99, 299, 599, 999]) s.grow([over([last - 50, last])]);
    expect(s.score).toBe(score);
    expect(s.distinct).toBe(distinct);
    expect(s.seen).toBe(seen);
  });

  it('grows by an eighth at least, so an index growing a document at a time does not make them at every query', () => {
    const s = new TopKScratch();
    s.reserve(800);
    s.reserve(801);
    expect(s.score.length).toBe(900);
    const { score } = s;
    for (let n = 802; n <= 900; n++) s.reserve(n);
    expect(s.score).toBe(score);
    s.grow([over([0, 2000])]);
    expect(s.score.length).toBe(2001);
    expect(s.seen.length).toBe(2001);
  });
});

import {
  BaseRunCache,
  buildRun,
  runCacheBudget,
  RUN_CACHE_MIN_BYTES,
  type BaseSegment,
} from '../../../../service/search/index/base-runs';

/**
 * A base of two fields over `terms` terms: term t is in field 0 of every document whose number
 * is a multiple of t + 1 (tf 1), and in field 1 of every fourth of those (tf 2), so each
 * term's run is field 0's documents with field 1's tfs placed along them (a run of its own arrays).
 */
function base(docs: number, terms: number): BaseSegment {
  const start: Int32Array[] = [];
  const ds: Int32Array[] = [];
  const tfs: Uint16Array[] = [];
  for (let f = 0; f < 2; f++) {
    const s = new Int32Array(terms + 1);
    const d: number[] = [];
    for (let t = 0; t < terms; t++) {
      for (let doc = 0; doc < docs; doc += (t + 1) * (f === 0 ? 1 : 4)) d.push(doc);
      s[t + 1] = d.length;
    }
    start.push(s);
    ds.push(Int32Array.from(d));
    tfs.push(new Uint16Array(d.length).fill(f + 1));
  }
  return { end: docs, start, docs: ds, tfs };
}

/** Bytes a run of `n` postings holds here: its document ids and both fields' tfs. */
const runBytes = (n: number) => n * (4 + 2 + 2);

describe('BaseRunCache', () => {
  it('keeps runs up to the base postings’ bytes, least recently used evicted first, and gives a merge the most recent ones', () => {
    const b = base(1000, 8);
    const budget = runCacheBudget(b, 0);
    // Each field's document ids and tfs: the budget grows with the base.
    const postings = b.docs[0].length + b.docs[1].length;
    expect(budget).toBe(postings * (4 + 2));
    expect(runCacheBudget(b)).toBe(RUN_CACHE_MIN_BYTES);

    const cache = new BaseRunCache(0);
    const sizes = [0, 1, 2, 3, 4, 5, 6, 7].map((t) => buildRun(b, 2, t)!.docs.length);
    for (let t = 0; t < 8; t++) {
      const run = cache.get(b, 2, t)!;
      expect([...run.docs]).toEqual([...buildRun(b, 2, t)!.docs]);
      // A hit is the same run, not built again.
      expect(cache.get(b, 2, t)).toBe(run);
    }
    // What fits: the most recent terms whose runs' bytes stay within the budget.
    let held = 0;
    let from = 8;
    while (from > 0 && held + runBytes(sizes[from - 1]) <= budget) held += runBytes(sizes[--from]);
    expect(from).toBeGreaterThan(0);
    expect(cache.terms()).toEqual([0, 1, 2, 3, 4, 5, 6, 7].slice(from));
    // Reading one makes it the most recent.
    cache.get(b, 2, 7);
    cache.get(b, 2, from);
    expect(cache.terms().at(-1)).toBe(from);
    // A merge builds ahead the most recent runs holding at most that many postings.
    expect(cache.recent(sizes[from])).toEqual([from]);
    expect(cache.recent(sizes[from] + sizes[7])).toEqual([7, from]);
    expect(cache.recent(sizes[from] + sizes[7] - 1)).toEqual([from]);
  });

  it('counts nothing for a run that is a view of the base’s own arrays, and starts over with a new base', () => {
    // One field only: every run is a view of that field's postings.
    const two = base(1000, 8);
    const one: BaseSegment = { end: 1000, start: [two.start[0]], docs: [two.docs[0]], tfs: [two.tfs[0]] };
    const cache = new BaseRunCache(0);
    for (let t = 0; t < 8; t++) expect(cache.get(one, 1, t)!.docs.buffer).toBe(one.docs[0].buffer);
    expect(cache.terms()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    cache.get(two, 2, 3);
    expect(cache.terms()).toEqual([3]);
  });
});

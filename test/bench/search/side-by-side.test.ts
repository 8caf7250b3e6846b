import { benchSizes, engines, measure, sideBySideTable, type EngineRun } from '../../../bench/search/side-by-side';
import type { Vaswani } from '../../../tools/corpus/vaswani';

// A judged mini collection: every engine must find the judged document of each query.
const items = [
  { id: 'doc-1', title: 'Laser beams', body: 'the laser beam in a plasma wave guide' },
  { id: 'doc-2', title: 'Electron spin', body: 'spin resonance of electrons in metals' },
  { id: 'doc-3', title: 'Antennas', body: 'design of a dipole antenna array for radio waves' },
  { id: 'doc-4', title: 'Transistors', body: 'junction transistor amplifier circuits' },
];
const v = {
  items,
  queries: [
    { qid: '1', text: 'laser beam plasma' },
    { qid: '2', text: 'dipole antenna design' },
  ],
  qrels: new Map([
    ['1', new Map([['doc-1', 1]])],
    ['2', new Map([['doc-3', 1]])],
  ]),
} as unknown as Vaswani;

describe('search engines side by side', () => {
  it('measures every engine on the same corpus, each finding the judged documents', async () => {
    const runs: EngineRun[] = [];
    for (const make of engines()) runs.push(await measure(make, v, items, 1));
    expect(runs.map((r) => r.engine)).toEqual([
      'service index, MaxScore (after)',
      'service index, exhaustive (before)',
      'MiniSearch + stemming',
      'wink-bm25-text-search (stemmed)',
      'FlexSearch',
    ]);
    for (const r of runs) {
      expect(r.docs).toBe(4);
      expect(r.ndcg10).toBeGreaterThan(0.5);
      expect(r.full.p50).toBeGreaterThanOrEqual(0);
    }
    const table = sideBySideTable(runs);
    expect(table).toHaveLength(2 + runs.length);
    expect(table[2]).toContain('| 1.0× | 1.0× |');
  });

  it('reads SEARCH_BENCH_SIZES and names a bad one', () => {
    expect(benchSizes({})).toEqual([11429, 50000, 200000]);
    expect(benchSizes({ SEARCH_BENCH_SIZES: '100, 200' })).toEqual([100, 200]);
    expect(() => benchSizes({ SEARCH_BENCH_SIZES: '10,x' })).toThrow(
      /SEARCH_BENCH_SIZES: 'x' is not a positive integer/,
    );
  });
});

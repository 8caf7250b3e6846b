import type { WeightedTerm } from '../../../service/search/index/cursor';
import { scoreTerms } from '../../../tools/oracles/exhaustive-scorer';
import { bm25, boost, build, expectSameScores, viaScorer, viaSearch, type Doc } from '../../helpers/minisearch-twin';

const docs: Doc[] = [
  { id: 'a', title: 'laser optics', text: 'laser optics beam coherent light laser' },
  { id: 'b', title: 'mirrors', text: 'laser beam mirror polishing' },
  { id: 'c', title: 'bread', text: 'bread baking flour water' },
  { id: 'd', title: 'water', text: 'water boiling point light' },
  { id: 'e', title: 'coherent light', text: 'coherent light source of a laser beam in water' },
];

describe('scoreTerms (the exhaustive scorer)', () => {
  it('gives the scores of MiniSearch search (OR, exact terms, term weights)', () => {
    const m = build(docs);
    const terms: WeightedTerm[] = [
      ['laser', 0.6],
      ['water', 0.25],
      ['light', 0.1],
      ['nothing', 0.5],
    ];
    const got = viaScorer(m, terms);
    expectSameScores(got, viaSearch(m, terms));
    expect(got.size).toBe(5);
  });

  it('counts a repeated term twice and a term once in `matched`', () => {
    const view = build(docs).c.postingsView();
    const once = scoreTerms(
      view,
      [
        ['laser', 1],
        ['light', 1],
      ],
      boost,
      bm25,
    );
    const twice = scoreTerms(
      view,
      [
        ['laser', 1],
        ['light', 1],
        ['laser', 1],
      ],
      boost,
      bm25,
    );
    const a = (r: typeof once) => r.ids.indexOf('a');
    const laserOnly = scoreTerms(view, [['laser', 1]], boost, bm25);
    expect(twice.scores[a(twice)]).toBeCloseTo(once.scores[a(once)] + laserOnly.scores[laserOnly.ids.indexOf('a')], 12);
    expect(twice.matched[a(twice)]).toBe(2);
    expect(once.matched[once.ids.indexOf('c')]).toBeUndefined();
  });

  it('skips terms of weight 0 and fields boosted 0', () => {
    const view = build(docs).c.postingsView();
    expect(scoreTerms(view, [['laser', 0]], boost, bm25).ids).toEqual([]);
    // "mirrors" is only in b's title (stemming is off here): a title boost of 0 leaves it out.
    expect(scoreTerms(view, [['mirrors', 1]], { title: 0, text: 1 }, bm25).ids).toEqual([]);
    expect(scoreTerms(view, [['mirrors', 1]], boost, bm25).ids).toEqual(['b']);
  });

  it('ignores discarded documents (tombstones): same as an index of the live ones', () => {
    const m = build(docs);
    m.discard('a');
    m.discard('e');
    m.add({ id: 'e', title: 'fresh', text: 'laser water' });
    const live = build([
      ...docs.filter((d) => d.id !== 'a' && d.id !== 'e'),
      { id: 'e', title: 'fresh', text: 'laser water' },
    ]);
    const terms: WeightedTerm[] = [
      ['laser', 1],
      ['water', 0.5],
      ['light', 0.3],
    ];
    // MiniSearch's own search is no reference here: it counts discarded documents in a term's
    // frequency until it meets them. The length averages are exact sums over the live documents,
    // so the scores are the same to the last bit (issue 39).
    const got = viaScorer(m, terms);
    const want = viaScorer(live, terms);
    expectSameScores(got, want);
    expectSameScores(want, viaSearch(live, terms));
  });

  it('follows the index as it changes, through a view taken before the change', () => {
    const m = build(docs);
    const view = m.c.postingsView();
    const score = () => {
      const { ids, scores } = scoreTerms(view, [['laser', 1]], boost, bm25);
      return new Map(ids.map((id, i) => [id, scores[i]]));
    };
    const before = score();
    m.add({ id: 'f', title: 'long', text: 'laser '.repeat(3) + 'filler '.repeat(40) });
    const after = score();
    expect(after.has('f')).toBe(true);
    expect(after.get('a')).not.toBeCloseTo(before.get('a')!, 6);
    expectSameScores(after, viaSearch(m, [['laser', 1]]));
  });
});

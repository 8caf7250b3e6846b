import { ScoringMiniSearch, type Bm25Params, type WeightedTerm } from '../../../service/search/term-scorer';

interface Doc {
  id: string;
  title: string;
  text: string;
}

const docs: Doc[] = [
  { id: 'a', title: 'laser optics', text: 'laser optics beam coherent light laser' },
  { id: 'b', title: 'mirrors', text: 'laser beam mirror polishing' },
  { id: 'c', title: 'bread', text: 'bread baking flour water' },
  { id: 'd', title: 'water', text: 'water boiling point light' },
  { id: 'e', title: 'coherent light', text: 'coherent light source of a laser beam in water' },
];
const boost = { title: 0.2, text: 1 };
const bm25: Bm25Params = { k: 0.9, b: 0.4, d: 0 };

function build(items: readonly Doc[]): ScoringMiniSearch<Doc> {
  const m = new ScoringMiniSearch<Doc>({ fields: ['title', 'text'], autoVacuum: false });
  m.addAll(items);
  return m;
}

/** What MiniSearch's own search gives: OR, exact terms, `boostTerm`, coordination undone. */
function viaSearch(m: ScoringMiniSearch<Doc>, terms: readonly WeightedTerm[]): Map<string, number> {
  const weights = new Map<string, number>();
  for (const [t, w] of terms) weights.set(t, w);
  const res = m.search(terms.map(([t]) => t).join(' '), {
    fields: Object.keys(boost),
    boost,
    bm25,
    combineWith: 'OR',
    boostTerm: (t) => weights.get(t) ?? 0,
  });
  return new Map(res.map((r) => [r.id as string, r.score / r.queryTerms.length]));
}

function viaScorer(m: ScoringMiniSearch<Doc>, terms: readonly WeightedTerm[]): Map<string, number> {
  const { ids, scores } = m.scoreTerms(terms, boost, bm25);
  return new Map(ids.map((id, i) => [id, scores[i]]));
}

function expectSameScores(actual: Map<string, number>, expected: Map<string, number>): void {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [id, s] of expected) expect(actual.get(id)).toBeCloseTo(s, 12);
}

describe('ScoringMiniSearch.scoreTerms', () => {
  it('gives the scores of MiniSearch search (OR, exact terms, term weights)', () => {
    const m = build(docs);
    const terms: WeightedTerm[] = [['laser', 0.6], ['water', 0.25], ['light', 0.1], ['nothing', 0.5]];
    const got = viaScorer(m, terms);
    expectSameScores(got, viaSearch(m, terms));
    expect(got.size).toBe(5);
  });

  it('counts a repeated term twice and a term once in `matched`', () => {
    const m = build(docs);
    const once = m.scoreTerms([['laser', 1], ['light', 1]], boost, bm25);
    const twice = m.scoreTerms([['laser', 1], ['light', 1], ['laser', 1]], boost, bm25);
    const a = (r: typeof once) => r.ids.indexOf('a');
    const laserOnly = m.scoreTerms([['laser', 1]], boost, bm25);
    expect(twice.scores[a(twice)]).toBeCloseTo(once.scores[a(once)] + laserOnly.scores[laserOnly.ids.indexOf('a')], 12);
    expect(twice.matched[a(twice)]).toBe(2);
    expect(once.matched[once.ids.indexOf('c')]).toBeUndefined();
  });

  it('skips terms of weight 0 and fields boosted 0', () => {
    const m = build(docs);
    expect(m.scoreTerms([['laser', 0]], boost, bm25).ids).toEqual([]);
    // "mirrors" is only in b's title (stemming is off here): a title boost of 0 leaves it out.
    expect(m.scoreTerms([['mirrors', 1]], { title: 0, text: 1 }, bm25).ids).toEqual([]);
    expect(m.scoreTerms([['mirrors', 1]], boost, bm25).ids).toEqual(['b']);
  });

  it('ignores discarded documents still in the postings: same as an index of the live ones', () => {
    const m = build(docs);
    m.discard('a');
    m.discard('e');
    m.add({ id: 'e', title: 'fresh', text: 'laser water' });
    const live = build([...docs.filter((d) => d.id !== 'a' && d.id !== 'e'), { id: 'e', title: 'fresh', text: 'laser water' }]);
    const terms: WeightedTerm[] = [['laser', 1], ['water', 0.5], ['light', 0.3]];
    expectSameScores(viaScorer(m, terms), viaScorer(live, terms));
    expectSameScores(viaScorer(live, terms), viaSearch(live, terms));
  });

  it('follows the index as it changes (cached length norms are rebuilt)', () => {
    const m = build(docs);
    const before = viaScorer(m, [['laser', 1]]);
    m.add({ id: 'f', title: 'long', text: 'laser '.repeat(3) + 'filler '.repeat(40) });
    const after = viaScorer(m, [['laser', 1]]);
    expect(after.has('f')).toBe(true);
    expect(after.get('a')).not.toBeCloseTo(before.get('a')!, 6);
    expectSameScores(after, viaSearch(m, [['laser', 1]]));
  });
});

describe('ScoringMiniSearch.expansions', () => {
  const vocab: Doc[] = [
    { id: 'p', title: 'lasers', text: 'lasing laserlike lasers' },
    { id: 'q', title: 'water', text: 'watery waters wafer' },
    { id: 'r', title: 'other', text: 'laser plain words' },
  ];

  it('scored with scoreTerms, gives the scores of MiniSearch prefix and fuzzy search', () => {
    const m = build(vocab);
    for (const term of ['laser', 'water']) {
      const found = m.expansions(term, { prefix: true, fuzzy: 1, scanLimit: 100 });
      expect(found.map((e) => e.term)).not.toContain(term);
      const got = viaScorer(m, [[term, 1], ...found.map((e): WeightedTerm => [e.term, e.weight])]);
      const res = m.search(term, { fields: Object.keys(boost), boost, bm25, prefix: true, fuzzy: 1 });
      expectSameScores(got, new Map(res.map((r) => [r.id as string, r.score])));
    }
  });

  it('looks at no more than scanLimit prefix matches', () => {
    const m = build([{ id: 'x', title: 'x', text: Array.from({ length: 500 }, (_, i) => `term${i}`).join(' ') }]);
    expect(m.expansions('term', { prefix: true, fuzzy: 0, scanLimit: 40 })).toHaveLength(40);
    expect(m.expansions('term', { prefix: true, fuzzy: 0, scanLimit: 1000 })).toHaveLength(500);
  });
});

import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { CompactIndex, type Bm25Params } from '../../../service/search/compact-index';
import type { WeightedTerm } from '../../../service/search/query-plan';

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

const words = (text: string): string[] => text.split(' ').filter(Boolean);

/**
 * The index under test and MiniSearch over the same documents, kept in step. MiniSearch takes a
 * field's length to be its distinct tokens; each occurrence is made distinct (`term\0n`) until
 * `processTerm` strips the mark, so its length is the number of terms, as BM25 (and
 * `CompactIndex`) count it.
 */
class Both {
  readonly c = new CompactIndex(['title', 'text']);
  readonly m = new MiniSearch<Doc>({
    fields: ['title', 'text'],
    autoVacuum: false,
    tokenize: (text) => words(text).map((t, i) => `${t}\u0000${i}`),
    processTerm: (term) => term.slice(0, term.indexOf('\u0000')),
  });
  constructor(items: readonly Doc[]) {
    for (const d of items) this.add(d);
  }
  add(d: Doc): void {
    this.c.add(d.id, [words(d.title), words(d.text)]);
    this.m.add(d);
  }
  discard(id: string): void {
    this.c.discard(id);
    this.m.discard(id);
  }
}

function build(items: readonly Doc[]): Both {
  return new Both(items);
}

/** What MiniSearch's own search gives: OR, exact terms, `boostTerm`, coordination undone. */
function viaSearch(b: Both, terms: readonly WeightedTerm[]): Map<string, number> {
  const m = b.m;
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

function viaScorer(b: Both, terms: readonly WeightedTerm[]): Map<string, number> {
  const { ids, scores } = b.c.scoreTerms(terms, boost, bm25);
  return new Map(ids.map((id, i) => [id, scores[i]]));
}

function expectSameScores(actual: Map<string, number>, expected: Map<string, number>): void {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  // Bit for bit: the same expression, document frequencies and running length averages.
  for (const [id, s] of expected) expect(actual.get(id)).toBe(s);
}

describe('CompactIndex.scoreTerms', () => {
  it('gives the scores of MiniSearch search (OR, exact terms, term weights)', () => {
    const m = build(docs);
    const terms: WeightedTerm[] = [['laser', 0.6], ['water', 0.25], ['light', 0.1], ['nothing', 0.5]];
    const got = viaScorer(m, terms);
    expectSameScores(got, viaSearch(m, terms));
    expect(got.size).toBe(5);
  });

  it('counts a repeated term twice and a term once in `matched`', () => {
    const m = build(docs).c;
    const once = m.scoreTerms([['laser', 1], ['light', 1]], boost, bm25);
    const twice = m.scoreTerms([['laser', 1], ['light', 1], ['laser', 1]], boost, bm25);
    const a = (r: typeof once) => r.ids.indexOf('a');
    const laserOnly = m.scoreTerms([['laser', 1]], boost, bm25);
    expect(twice.scores[a(twice)]).toBeCloseTo(once.scores[a(once)] + laserOnly.scores[laserOnly.ids.indexOf('a')], 12);
    expect(twice.matched[a(twice)]).toBe(2);
    expect(once.matched[once.ids.indexOf('c')]).toBeUndefined();
  });

  it('skips terms of weight 0 and fields boosted 0', () => {
    const m = build(docs).c;
    expect(m.scoreTerms([['laser', 0]], boost, bm25).ids).toEqual([]);
    // "mirrors" is only in b's title (stemming is off here): a title boost of 0 leaves it out.
    expect(m.scoreTerms([['mirrors', 1]], { title: 0, text: 1 }, bm25).ids).toEqual([]);
    expect(m.scoreTerms([['mirrors', 1]], boost, bm25).ids).toEqual(['b']);
  });

  it('ignores discarded documents (tombstones): same as an index of the live ones', () => {
    const m = build(docs);
    m.discard('a');
    m.discard('e');
    m.add({ id: 'e', title: 'fresh', text: 'laser water' });
    const live = build([...docs.filter((d) => d.id !== 'a' && d.id !== 'e'), { id: 'e', title: 'fresh', text: 'laser water' }]);
    const terms: WeightedTerm[] = [['laser', 1], ['water', 0.5], ['light', 0.3]];
    // MiniSearch's own search is no reference here: it counts discarded documents in a term's
    // frequency until it meets them. The running length averages drift in the last bits.
    const got = viaScorer(m, terms);
    const want = viaScorer(live, terms);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [id, s] of want) expect(got.get(id)).toBeCloseTo(s, 12);
    expectSameScores(want, viaSearch(live, terms));
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

describe('CompactIndex segments', () => {
  const WORDS = ['laser', 'beam', 'water', 'light', 'bread', 'mirror', 'lasers', 'lase'];
  const doc = fc.record({ id: fc.integer({ min: 0, max: 12 }), title: fc.array(fc.constantFrom(...WORDS), { maxLength: 3 }), text: fc.array(fc.constantFrom(...WORDS), { maxLength: 12 }) });
  const op = fc.oneof(
    doc.map((d) => ({ add: d })),
    fc.integer({ min: 0, max: 12 }).map((id) => ({ remove: id })),
    fc.integer({ min: 1, max: 3 }).map((n) => ({ tick: n })),
  );
  type Op = { add: { id: number; title: string[]; text: string[] } } | { remove: number } | { tick: number };
  const terms: WeightedTerm[] = WORDS.map((w, i) => [w, 1 / (i + 1)]);

  /** Scores, expansions, forward index and fingerprints of `c` are those of an index built from `final`. */
  function expectBuiltFrom(c: CompactIndex, final: ReadonlyMap<string, { title: string[]; text: string[]; fp: number }>): void {
    const rebuilt = new CompactIndex(['title', 'text']);
    for (const [id, d] of final) rebuilt.load(id, [d.title, d.text]);
    rebuilt.seal();
    expect(c.documentCount).toBe(final.size);
    const score = (x: CompactIndex) => {
      const { ids, scores } = x.scoreTerms(terms, boost, bm25);
      return new Map(ids.map((id, i) => [id, scores[i]]));
    };
    const got = score(c);
    const want = score(rebuilt);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [id, s] of want) expect(got.get(id)).toBeCloseTo(s, 9);
    const look = { prefix: true, fuzzy: 1, scanLimit: 100 };
    const terms1 = (x: CompactIndex) => x.expansions('laser', look).map((e) => `${e.term}:${e.df}`).sort();
    expect(terms1(c)).toEqual(terms1(rebuilt));
    for (const [id, d] of final) {
      const a = c.shortId(id)!;
      const b = rebuilt.shortId(id)!;
      expect(c.externalId(a)).toBe(id);
      expect(c.fieldTerms(a, 'text')).toEqual(rebuilt.fieldTerms(b, 'text'));
      expect(c.fieldLength(a, 'title')).toBe(d.title.length);
      expect(c.fingerprint(a)).toBe(d.fp);
    }
  }

  it.each([
    ['inside the write that triggers them', false],
    ['in the background, while writes and searches go on', true],
  ])('after adds, replacements and deletes across many merges (%s), scores and expands as an index built from the final documents', async (_name, background) => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 80 }), async (ops: Op[]) => {
        const c = new CompactIndex(['title', 'text'], { minMergeDocs: 2, background, mergeSliceMs: 0 });
        const final = new Map<string, { title: string[]; text: string[]; fp: number }>();
        let fp = 0;
        for (const o of ops) {
          if ('add' in o) {
            const id = `d${o.add.id}`;
            c.discard(id);
            c.add(id, [o.add.title, o.add.text], ++fp);
            final.set(id, { ...o.add, fp });
          } else if ('remove' in o) {
            c.discard(`d${o.remove}`);
            final.delete(`d${o.remove}`);
          } else {
            for (let i = 0; i < o.tick; i++) await new Promise((r) => setImmediate(r));
            // Mid-merge too: the old base, the frozen and the fresh appended segment together.
            expectBuiltFrom(c, final);
          }
        }
        expectBuiltFrom(c, final);
        await c.merged();
        expectBuiltFrom(c, final);
      }),
      { numRuns: 150 },
    );
  });

  it('hands every new base to onSealed: the documents live when its merge began', async () => {
    const seen: string[][] = [];
    const c = new CompactIndex(['title', 'text'], {
      minMergeDocs: 2,
      mergeSliceMs: 0,
      onSealed: (s) => {
        seen.push([...s.ids]);
        // Exactly its documents' part of the arrays, which have room after it for appends.
        const n = s.ids.length;
        expect([s.fingerprints.length, s.lengths.length, s.fwdStart.length, s.fwdTf.length]).toEqual([n, n * 2, n * 2 + 1, s.fwdTerm.length]);
        expect(s.fwdTerm.length).toBe(s.fwdStart[n * 2]);
      },
    });
    c.add('a', [['laser'], ['laser beam']]);
    c.add('b', [['water'], ['water']]);
    // The merge began with a and b; c arrives and a goes while it runs.
    c.add('c', [['bread'], ['bread']]);
    c.discard('a');
    await c.merged();
    expect(seen[0]).toEqual(['a', 'b']);
    expect(c.documentCount).toBe(2);
    expect(c.scoreTerms([['laser', 1]], boost, bm25).ids).toEqual([]);
    expect(c.scoreTerms([['bread', 1]], boost, bm25).ids).toEqual(['c']);
  });
});

describe('CompactIndex forward index', () => {
  it('keeps terms in order of first occurrence with their counts, saturating tf at 65535, and exact lengths', () => {
    const c = new CompactIndex(['text']);
    c.add('x', [['b', 'a', 'b', ...Array.from({ length: 70_000 }, () => 'c')]]);
    const d = c.shortId('x')!;
    expect([...c.fieldTerms(d, 'text')]).toEqual([['b', 2], ['a', 1], ['c', 65_535]]);
    expect(c.fieldLength(d, 'text')).toBe(70_003);
    expect(c.hasTerm(d, 'text', 'a')).toBe(true);
    expect(c.hasTerm(d, 'text', 'z')).toBe(false);
  });
});

describe('CompactIndex.expansions', () => {
  const vocab: Doc[] = [
    { id: 'p', title: 'lasers', text: 'lasing laserlike lasers' },
    { id: 'q', title: 'water', text: 'watery waters wafer' },
    { id: 'r', title: 'other', text: 'laser plain words' },
  ];

  it('scored with scoreTerms, gives the scores of MiniSearch prefix and fuzzy search', () => {
    const m = build(vocab);
    for (const term of ['laser', 'water']) {
      const found = m.c.expansions(term, { prefix: true, fuzzy: 1, scanLimit: 100 });
      expect(found.map((e) => e.term)).not.toContain(term);
      const got = viaScorer(m, [[term, 1], ...found.map((e): WeightedTerm => [e.term, e.weight])]);
      const res = m.m.search(term, { fields: Object.keys(boost), boost, bm25, prefix: true, fuzzy: 1 });
      expectSameScores(got, new Map(res.map((r) => [r.id as string, r.score])));
    }
  });

  it('looks at no more than scanLimit prefix matches', () => {
    const m = build([{ id: 'x', title: 'x', text: Array.from({ length: 500 }, (_, i) => `term${i}`).join(' ') }]);
    expect(m.c.expansions('term', { prefix: true, fuzzy: 0, scanLimit: 40 })).toHaveLength(40);
    expect(m.c.expansions('term', { prefix: true, fuzzy: 0, scanLimit: 1000 })).toHaveLength(500);
  });

  it('kept between writes, still follows every add and delete', () => {
    const c = new CompactIndex(['title', 'text'], { minMergeDocs: 2, background: false });
    const look = { prefix: true, fuzzy: 1, scanLimit: 100 };
    const found = () => c.expansions('laser', look).map((e) => `${e.term}:${e.df}`).sort();
    c.add('a', [['lasers'], ['water']]);
    expect(found()).toEqual(['lasers:1']);
    found().push('changed by a caller');
    expect(found()).toEqual(['lasers:1']);
    c.add('b', [['lasers', 'lase'], ['lasing']]);
    expect(found()).toEqual(['lase:1', 'lasers:2']);
    c.discard('a');
    c.discard('b');
    expect(found()).toEqual([]);
    c.add('c', [['laserlike'], []]);
    expect(found()).toEqual(['laserlike:1']);
  });
});

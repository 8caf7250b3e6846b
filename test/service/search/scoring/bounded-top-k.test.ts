import fc from 'fast-check';
import { CompactIndex } from '../../../../service/search/index/compact-index';
import { accumulatedTopK } from '../../../../service/search/scoring/accumulated-top-k';
import { boundedTopK } from '../../../../service/search/scoring/bounded-top-k';
import { maxScoreTopK } from '../../../../service/search/scoring/max-score';
import { exactScore, type TopKOptions } from '../../../../service/search/scoring/top-k';
import { TopKScratch, TopPairs } from '../../../../service/search/scoring/top-k-scratch';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

const WORDS = Array.from({ length: 24 }, (_, i) => `w${i}`);
const BM25 = { k: 0.6, b: 0.6, d: 1 };

/** The options of a top-k over `index` with `keep`, and with `coordinated` a coordination factor per document (at most `maxCoordination`). */
const topKOptions = (
  index: CompactIndex,
  k: number,
  keep: ((d: number) => boolean) | undefined,
  coordinated: boolean,
  maxCoordination: number,
): TopKOptions => {
  const base: TopKOptions = { k, idOf: (d) => index.externalId(d), keep, scratch: new TopKScratch() };
  return coordinated ? { ...base, coordination: (d, matched) => matched / (1 + (d % 3)), maxCoordination } : base;
};

describe('boundedTopK', () => {
  const query = fc.array(
    fc.tuple(
      fc.constantFrom(...WORDS),
      fc.oneof(fc.double({ min: 0.2, max: 1, noNaN: true }), fc.double({ min: 0.001, max: 0.05, noNaN: true })),
    ),
    { minLength: 1, maxLength: 30 },
  );
  // RM3-shaped queries: a few heavy terms and many light ones over short documents of few words,
  // so most documents match several terms, many tie, and the whole-score floor, the candidates'
  // bitmap and the drops after each term all come into play. accumulatedTopK scores every
  // posting: the reference.
  it(
    'gives the best k of scoring every posting, with a filter, known documents and one query after another',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }), {
            minLength: 1,
            maxLength: 150,
          }),
          fc.array(query, { minLength: 2, maxLength: 3 }),
          fc.integer({ min: 1, max: 12 }),
          fc.option(fc.integer({ min: 2, max: 5 }), { nil: undefined }),
          (docs, queries, k, every) => {
            // Background merges off: some documents in the base, the latest appended.
            const index = new CompactIndex(['title', 'text'], { minMergeDocs: 32, background: false });
            docs.forEach((words, i) => index.add(`d${String(999 - i).padStart(3, '0')}`, [words.slice(0, 2), words]));
            const keep = every === undefined ? undefined : (d: number) => d % every !== 0;
            // One scratch for every call, as an index keeps one for its queries.
            const opts: TopKOptions = { k, idOf: (d) => index.externalId(d), keep, scratch: new TopKScratch() };
            // One query after another, then the first again: the scratch (accumulators, bitmap) is left clear.
            for (const terms of [...queries, queries[0]]) {
              const { cursors } = index.cursors(terms, { title: 0.2, text: 1 }, BM25, false);
              const want = accumulatedTopK(cursors, opts);
              expect(boundedTopK(cursors, opts)).toEqual(want);
              // Documents known to match and be kept (as RM3's feedback documents are).
              const known = [...new Set(cursors.flatMap((c) => Array.from(c.docs.subarray(0, 4))))].filter(
                (d) => !keep || keep(d),
              );
              expect(boundedTopK(cursors, { ...opts, known })).toEqual(want);
              if (keep) {
                // The filter with its bitmap (as a compiled filter carries it): boundedTopK then
                // lists and sums only the documents kept; MaxScore passes the others by unscored;
                // accumulatedTopK tests the bitmap, not the function.
                const bits = new Int32Array(((docs.length + 31) >>> 5) + 1);
                for (let d = 0; d < docs.length; d++) if (keep(d)) bits[d >>> 5] |= 1 << (d & 31);
                const withBits = { ...opts, keep: Object.assign((d: number) => keep(d), { bits }) };
                expect(boundedTopK(cursors, withBits)).toEqual(want);
                expect(boundedTopK(cursors, { ...withBits, known })).toEqual(want);
                expect(maxScoreTopK(cursors, withBits)).toEqual(want);
                expect(accumulatedTopK(cursors, withBits)).toEqual(want);
                // Kept aside while scoring without the filter (RM3's first pass under a narrow
                // one): documents the filter keeps, each with a partial sum at most its score;
                // as the filtered pass's known documents, the same page.
                const unfiltered = { ...opts, keep: undefined };
                const all = accumulatedTopK(cursors, unfiltered);
                for (const kept of [keep, withBits.keep]) {
                  const top = new TopPairs().reset(2 * k);
                  expect(boundedTopK(cursors, { ...unfiltered, sample: { keep: kept, top } })).toEqual(all);
                  const sampled = Array.from(top.docs.subarray(0, top.size));
                  sampled.forEach((d, i) => {
                    expect(keep(d)).toBe(true);
                    expect(top.vals[i]).toBeLessThanOrEqual(exactScore(cursors, opts, d) * (1 + 1e-9));
                  });
                  expect(boundedTopK(cursors, { ...withBits, known: sampled })).toEqual(want);
                }
              }
            }
          },
        ),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  // A window of a windowed pass whose bounds fall short of the page's k-th score so far meets no
  // document: its bitmap was once sized for the last document met, −1 (2^27 words, 512 MB).
  it('finds nothing under a floor above every bound, without growing its bitmap', () => {
    const index = new CompactIndex(['title', 'text'], { minMergeDocs: 32, background: false });
    for (let i = 0; i < 40; i++) index.add(`d${i}`, [['w0'], ['w0', `w${1 + (i % 3)}`]]);
    const { cursors } = index.cursors(
      [
        ['w0', 1],
        ['w1', 0.5],
      ],
      { title: 0.2, text: 1 },
      BM25,
      false,
    );
    const scratch = new TopKScratch();
    const opts: TopKOptions = { k: 3, idOf: (d) => index.externalId(d), scratch };
    const bounds = cursors.reduce((sum, c) => sum + c.bound, 0);
    expect(boundedTopK(cursors, { ...opts, floor: bounds * 2 })).toEqual([]);
    expect(scratch.aliveBits(0).length).toBeLessThan(64);
    expect(boundedTopK(cursors, opts)).toEqual(accumulatedTopK(cursors, { ...opts, scratch: new TopKScratch() }));
  });
});

describe('the scorers over documents spanning several regions (ScoreCursor.regions)', () => {
  // Up to six regions of 256 documents; half the words hold documents of a third of the regions
  // only, so terms' bounds differ from region to region (0 in most for some) and the region
  // bounds prune: whole regions skipped, look-ups cut short. accumulatedTopK scores every posting:
  // the reference.
  it(
    'gives the best k of scoring every posting, with a filter, known documents, a floor and a coordination factor',
    () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              words: fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 1, maxLength: 6 }),
              pad: fc.integer({ min: 0, max: 4 }),
            }),
            { minLength: 257, maxLength: 1500 },
          ),
          fc.array(
            fc.tuple(
              fc.integer({ min: 0, max: 15 }),
              fc.oneof(fc.double({ min: 0.2, max: 1, noNaN: true }), fc.double({ min: 0.001, max: 0.05, noNaN: true })),
            ),
            { minLength: 1, maxLength: 12 },
          ),
          fc.integer({ min: 1, max: 12 }),
          fc.option(fc.integer({ min: 2, max: 5 }), { nil: undefined }),
          fc.boolean(),
          (docs, query, k, every, coordinated) => {
            const index = new CompactIndex(['title', 'text'], { minMergeDocs: 512, background: false });
            docs.forEach((d, i) => {
              const words = d.words.filter((x) => x < 8 || ((i >> 8) + x) % 3 === 0).map((x) => `w${x}`);
              const text = [...(words.length ? words : ['pad']), ...Array<string>(d.pad).fill('pad')];
              index.add(`d${String(9999 - i).padStart(4, '0')}`, [text.slice(0, 2), text]);
            });
            const keep = every === undefined ? undefined : (d: number) => d % every !== 0;
            const terms = query.map(([x, w]) => [`w${x}`, w] as const);
            const { cursors } = index.cursors(terms, { title: 0.2, text: 1 }, BM25, false);
            const opts = topKOptions(index, k, keep, coordinated, 12);
            const want = accumulatedTopK(cursors, opts);
            expect(maxScoreTopK(cursors, opts)).toEqual(want);
            expect(boundedTopK(cursors, opts)).toEqual(want);
            // A floor just under the k-th best score (as a later window starts from), and known documents.
            if (want.length === k) {
              const floor = want[k - 1].score * (1 - 1e-9);
              expect(maxScoreTopK(cursors, { ...opts, floor })).toEqual(want);
              expect(boundedTopK(cursors, { ...opts, floor })).toEqual(want);
            }
            const known = want.slice(0, 3).map((h) => h.doc);
            expect(maxScoreTopK(cursors, { ...opts, known })).toEqual(want);
            expect(boundedTopK(cursors, { ...opts, known })).toEqual(want);
          },
        ),
        { numRuns: 60 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe('accumulatedTopK', () => {
  // Blocks of a few documents (at 1M they span 32,768): every cursor adds its postings block
  // after block, and the documents of each block are offered before the next.
  it(
    'gives the same hits, to the bit, in blocks of any size as MaxScore, with a filter and a coordination factor',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }), {
            minLength: 1,
            maxLength: 150,
          }),
          fc.array(
            fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.double({ min: 0.01, max: 1, noNaN: true })), {
              minLength: 1,
              maxLength: 30,
            }),
            { minLength: 2, maxLength: 3 },
          ),
          fc.integer({ min: 1, max: 12 }),
          fc.integer({ min: 1, max: 40 }),
          fc.option(fc.integer({ min: 2, max: 5 }), { nil: undefined }),
          fc.boolean(),
          (docs, queries, k, block, every, coordinated) => {
            const index = new CompactIndex(['title', 'text'], { minMergeDocs: 32, background: false });
            docs.forEach((words, i) => index.add(`d${String(999 - i).padStart(3, '0')}`, [words.slice(0, 2), words]));
            const keep = every === undefined ? undefined : (d: number) => d % every !== 0;
            const opts = topKOptions(index, k, keep, coordinated, 30);
            // One query after another, then the first again: the scratch is left clear between them.
            for (const terms of [...queries, queries[0]]) {
              const { cursors } = index.cursors(terms, { title: 0.2, text: 1 }, BM25, false);
              const want = maxScoreTopK(cursors, opts);
              expect(accumulatedTopK(cursors, opts, block)).toEqual(want);
              expect(accumulatedTopK(cursors, opts)).toEqual(want);
            }
          },
        ),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe("the index's whole scorer (TopKOptions.whole)", () => {
  // Documents in the base and appended, some discarded and some replaced (discarded, then added
  // again under the same id: a new short id in the appended segment), a term repeated in the
  // query: every matching live document's score from its forward entries is the cursors' sum to
  // the bit (accumulatedTopK over every match is the reference), and boundedTopK with it gives
  // the same page.
  it(
    'scores a live document as the cursors sum it, across base, appended, discarded and replaced documents',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }), {
            minLength: 1,
            maxLength: 120,
          }),
          fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.double({ min: 0.001, max: 1, noNaN: true })), {
            minLength: 1,
            maxLength: 30,
          }),
          fc.array(fc.nat(), { maxLength: 20 }),
          fc.integer({ min: 1, max: 12 }),
          (docs, terms, changes, k) => {
            const index = new CompactIndex(['title', 'text'], { minMergeDocs: 16, background: false });
            const id = (i: number) => `d${String(999 - i).padStart(3, '0')}`;
            docs.forEach((words, i) => index.add(id(i), [words.slice(0, 2), words]));
            for (const [n, c] of changes.entries()) {
              const i = c % docs.length;
              index.discard(id(i));
              if (n % 2 === 0) index.add(id(i), [docs[(i + 1) % docs.length].slice(0, 2), docs[(i + 1) % docs.length]]);
            }
            const query = [...terms, terms[0]];
            const { cursors, whole } = index.cursors(query, { title: 0.2, text: 1 }, BM25, false);
            const all = accumulatedTopK(cursors, { k: docs.length + changes.length, idOf: (d) => index.externalId(d) });
            for (const hit of all) expect(whole(index.shortId(hit.id)!)).toBe(hit.score);
            const opts: TopKOptions = { k, idOf: (d) => index.externalId(d) };
            expect(boundedTopK(cursors, { ...opts, whole })).toEqual(accumulatedTopK(cursors, opts));
          },
        ),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe("the index's count of matches (cursors' total)", () => {
  // Dense terms over few words, the same query counted again and again between writes: the
  // first count scatters every posting, the second makes the dense parts' bitmaps, later ones
  // OR them in; each count is the plain union's, with a filter too, and after writes.
  it(
    'counts the documents any cursor holds, the same from bitmaps as from postings',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.array(fc.constantFrom(...WORDS.slice(0, 6)), { minLength: 1, maxLength: 6 }), {
            minLength: 1,
            maxLength: 200,
          }),
          fc.array(fc.tuple(fc.constantFrom(...WORDS.slice(0, 8)), fc.double({ min: 0.01, max: 1, noNaN: true })), {
            minLength: 1,
            maxLength: 6,
          }),
          fc.array(fc.nat(), { maxLength: 6 }),
          fc.option(fc.integer({ min: 2, max: 5 }), { nil: undefined }),
          (docs, terms, discards, every) => {
            const index = new CompactIndex(['title', 'text'], { minMergeDocs: 32, background: false });
            const id = (i: number) => `d${String(999 - i).padStart(3, '0')}`;
            docs.forEach((words, i) => index.add(id(i), [words.slice(0, 2), words]));
            const keep = every === undefined ? undefined : (d: number) => d % every !== 0;
            const plain = () => {
              const { cursors } = index.cursors(terms, { title: 0.2, text: 1 }, BM25, false);
              const all = new Set(cursors.flatMap((c) => Array.from(c.docs)));
              return [...all].filter((d) => !keep || keep(d)).length;
            };
            for (const round of [0, 1]) {
              if (round === 1) for (const x of discards) index.discard(id(x % docs.length));
              const want = plain();
              for (let n = 0; n < 3; n++)
                expect(index.cursors(terms, { title: 0.2, text: 1 }, BM25, true, keep).total).toBe(want);
            }
          },
        ),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

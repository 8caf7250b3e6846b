import fc from 'fast-check';
import { ITEM_TYPES, type ItemType } from '../../../service/content/item';
import { dayNumber, type FacetName, type ItemFilter } from '../../../service/content/item-filter';
import { atOnce } from '../../../service/lib/yield-to-loop';
import { FacetTally } from '../../../service/search/browse';
import { DocColumns, type ColumnSource } from '../../../service/search/doc-columns';
import { columnSourceOf, type TestAttributes } from '../../helpers/column-source';
import { CompactIndex } from '../../../service/search/index/compact-index';
import { tallyLive, type LiveWords } from '../../../service/search/live-tally';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

/*
 * A browse's facet count over every live document (issue 40, browse2): `tallyLive` reads the
 * index's live documents (`SegmentedIndex.liveWords`) and counts them through a facet tally a
 * bounded piece a step. Exact against the definition, and each step bounded by counts: the
 * documents it reads the liveness of, or counts one by one.
 */

// Few tags, so few facet groups: blocks of 128 documents or more keep their counts.
const TAGS = ['a', 'b'];
const DAYS = ['2021-03-01', '2023-01-01', '2024-02-29'];

interface Doc {
  readonly type: ItemType;
  readonly tags: readonly string[];
  readonly day: string;
  /** In the sealed base (else appended after it). */
  readonly base: boolean;
  readonly deleted: boolean;
}

const docArb: fc.Arbitrary<Doc> = fc.record({
  type: fc.constantFrom(...ITEM_TYPES),
  tags: fc.subarray(TAGS),
  day: fc.constantFrom(...DAYS),
  base: fc.boolean(),
  // Deleted with odds of 0, 1 in 8 or 7 in 8 a corpus (`corpusArb`).
  deleted: fc.constant(false),
});

/** Documents, the base's first, each deleted with `odds` in 8 (by `seed`). */
const corpusArb: fc.Arbitrary<Doc[]> = fc
  .tuple(
    fc.oneof(
      fc.array(docArb, { minLength: 1, maxLength: 40 }),
      fc.array(docArb, { minLength: 100, maxLength: 700, size: 'max' }),
    ),
    fc.constantFrom(0, 1, 7),
    fc.nat(),
  )
  .map(([docs, odds, seed]) => {
    const r = fc.sample(fc.integer({ min: 0, max: 7 }), { numRuns: docs.length, seed });
    const sorted = [...docs.filter((d) => d.base), ...docs.filter((d) => !d.base)];
    return sorted.map((d, i) => ({ ...d, deleted: r[i] < odds }));
  });

const filterArb: fc.Arbitrary<ItemFilter> = fc
  .record({
    type: fc.option(fc.subarray([...ITEM_TYPES], { minLength: 1 }), { nil: undefined }),
    tag: fc.option(fc.subarray(['a', 'B', 'nosuch'], { minLength: 1 }), { nil: undefined }),
    // Mostly none: a date part makes the tally count document by document.
    date_from: fc.constantFrom(undefined, undefined, undefined, ...DAYS),
  })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as ItemFilter);

/** The index of `docs` (a sealed base, appended documents, deletions: never merged: fewer than `minMergeDocs`) and its columns. */
function indexOf(docs: readonly Doc[], groupBlockDocs: number): { index: CompactIndex; cols: DocColumns } {
  const index = new CompactIndex(['text'], { minMergeDocs: 1 << 20, background: false });
  docs.forEach((d, i) => d.base && index.load(`d${i}`, [['w']]));
  index.seal();
  docs.forEach((d, i) => !d.base && index.add(`d${i}`, [['w']]));
  docs.forEach((d, i) => d.deleted && index.discard(`d${i}`));
  const cols = new DocColumns({ groupBlockDocs });
  atOnce(
    cols.update(
      columnSourceOf(
        index.idLimit,
        (doc) => (index.externalId(doc) === undefined ? undefined : attributesOf(docs[doc])),
        index.numbering,
      ),
    ),
  );
  return { index, cols };
}

/** The columns' source over `docs` (a deleted document has no id). */
function sourceOf(docs: readonly Doc[]): ColumnSource {
  return columnSourceOf(docs.length, (doc) => (docs[doc].deleted ? undefined : attributesOf(docs[doc])));
}

const attributesOf = (d: Doc): TestAttributes => ({ type: d.type, tags: d.tags, day: dayNumber(d.day), updated: 0 });

/** A facet tally of every live document of `docs`, counted one by one (`FacetTally.visit`). */
function oneByOne(cols: DocColumns, docs: readonly Doc[], f: ItemFilter, facets: readonly FacetName[]) {
  const tally = new FacetTally(cols, cols.compile(f), facets);
  let total = 0;
  docs.forEach((d, i) => !d.deleted && tally.visit(i) && (total += 1));
  return { total, counts: tally.counts(100) };
}

describe('tallyLive: a browse counts every live document through its facet tally', () => {
  it(
    'gives the totals and facets of the documents counted one by one, and reads or counts at most a step of documents a step',
    () => {
      fc.assert(
        fc.property(
          corpusArb,
          fc.constantFrom(64, 128, 256),
          fc.constantFrom(1, 2, 3),
          filterArb,
          fc.constantFrom<FacetName[]>(['type', 'tag'], ['tag'], ['type']),
          (docs, groupBlockDocs, stepWords, f, facets) => {
            const { index, cols } = indexOf(docs, groupBlockDocs);
            const n = index.idLimit;
            expect(n).toBe(docs.length);
            const tally = new FacetTally(cols, cols.compile(f), facets);
            atOnce(tally.preparing());
            const block = tally.blockWork();
            // What each step did: the words it read the liveness of, and the word runs it counted.
            let reads: number[] = [];
            let counts: Array<[number, number]> = [];
            const liveWords: LiveWords = (out, lo, hi) => {
              reads.push(hi - lo);
              return index.liveWords(out, lo, hi);
            };
            const words = (union: Int32Array, lo: number, hi: number) => {
              counts.push([lo, hi]);
              return tally.visit.words!(union, lo, hi);
            };
            const job = tallyLive(n, liveWords, words, { block, stepWords });
            let total: number | undefined;
            for (let steps = 0; total === undefined; steps++) {
              expect(steps).toBeLessThanOrEqual(4 * Math.ceil(n / 32 / stepWords) + 8);
              reads = [];
              counts = [];
              const r = job.next();
              if (r.done) total = r.value;
              // One piece a step: the liveness of `stepWords` words, or a count of as many words, or
              // of a whole block whose documents not live and groups are at most a step's documents.
              expect(reads.length + counts.length).toBeLessThanOrEqual(1);
              for (const w of reads) expect(w).toBeLessThanOrEqual(stepWords);
              for (const [lo, hi] of counts) {
                if (hi - lo <= stepWords) continue;
                expect(block).toBeDefined();
                expect(lo % block!.words).toBe(0);
                expect(hi - lo).toBeLessThanOrEqual(block!.words);
                let dead = 0;
                for (let d = lo * 32; d < Math.min(n, hi * 32); d++) if (docs[d].deleted) dead += 1;
                expect(dead + block!.groups).toBeLessThanOrEqual(stepWords * 32);
              }
            }
            expect({ total, counts: tally.counts(100) }).toEqual(oneByOne(cols, docs, f, facets));
          },
        ),
        { numRuns: 150 },
      );
    },
    // A hang guard only: the property is bounded by numRuns and the sizes drawn (test/helpers/property.ts).
    PROPERTY_HANG_GUARD_MS,
  );

  it('liveWords: the live documents of the base and the appended ones, as externalId tells them', () => {
    const docs: Doc[] = Array.from({ length: 200 }, (_, i) => ({
      type: 'article',
      tags: [],
      day: DAYS[0],
      base: i < 90,
      deleted: i % 7 === 3 || (i >= 150 && i < 190),
    }));
    const { index } = indexOf(docs, 64);
    for (const [lo, hi] of [
      [0, 7],
      [2, 5],
      [6, 9],
    ]) {
      const out = new Int32Array(9).fill(0x5a5a5a5a);
      const live = index.liveWords(out, lo, hi);
      let want = 0;
      for (let w = lo; w < hi; w++) {
        let x = 0;
        for (let d = w * 32; d < w * 32 + 32; d++)
          if (d < index.idLimit && index.externalId(d) !== undefined) {
            x |= 1 << (d & 31);
            want += 1;
          }
        expect(out[w]).toBe(x);
      }
      expect(live).toBe(want);
    }
    // None deleted: whole words, the last cut at the documents.
    const { index: full } = indexOf(
      docs.map((d) => ({ ...d, deleted: false })),
      64,
    );
    const out = new Int32Array(7);
    expect(full.liveWords(out, 0, 7)).toBe(200);
    expect([...out]).toEqual([-1, -1, -1, -1, -1, -1, (1 << 8) - 1]);
  });

  it('counts the blocks of facet groups and the types bitmaps a bounded number of documents a step, as at once', () => {
    const docs: Doc[] = Array.from({ length: 150_000 }, (_, i) => ({
      type: ITEM_TYPES[i % 3],
      tags: [TAGS[i % TAGS.length]],
      day: DAYS[0],
      base: true,
      deleted: false,
    }));
    const columns = () => {
      const cols = new DocColumns();
      atOnce(cols.update(sourceOf(docs)));
      return cols;
    };
    const stepwise = columns();
    const atOnceCols = columns();
    let steps = 0;
    const blocks = stepwise.countingBlocks();
    while (!blocks.next().done) steps += 1;
    // 150,000 documents, 65,536 a step: three steps, two yields between them.
    expect(steps).toBe(2);
    expect(stepwise.groupBlocks()).toEqual(atOnceCols.groupBlocks());
    let typeSteps = 0;
    const types = stepwise.makingTypeBitmaps();
    while (!types.next().done) typeSteps += 1;
    expect(typeSteps).toBe(2);
    expect(stepwise.typeBitmaps()).toEqual(atOnceCols.typeBitmaps());
    expect(stepwise.groupBlocks()!.counts[0].reduce((a, b) => a + b, 0)).toBe(
      1 << 18 > docs.length ? docs.length : 1 << 18,
    );
  });
});

import fc from 'fast-check';
import { ITEM_TYPES, type ItemType } from '../../../service/content/item';
import { dayNumber, type FacetName, type ItemFilter } from '../../../service/content/item-filter';
import { atOnce } from '../../../service/lib/yield-to-loop';
import { FacetTally, groupsOfPiece, type FacetCounts } from '../../../service/search/browse';
import { DocColumns, type ColumnSource } from '../../../service/search/doc-columns';
import { columnSourceOf } from '../../helpers/column-source';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

/*
 * Facet counts over a match set (issue 40): every way `FacetTally` counts — the whole union at
 * once by facet groups (`visit.words`, a search's count and a browse's), word by word
 * (`visit.word`), document by document (`visit`) — against the definition of disjunctive facets
 * read off the documents' attributes.
 */

const TAGS = ['a', 'b', 'c', 'd', 'e'];
const DAYS = ['2021-03-01', '2023-01-01', '2023-06-15', '2024-02-29'];

interface Doc {
  readonly type: ItemType;
  readonly tags: readonly string[];
  readonly day: string;
  readonly live: boolean;
}

const docArb: fc.Arbitrary<Doc> = fc.record({
  type: fc.constantFrom(...ITEM_TYPES),
  tags: fc.subarray(TAGS),
  day: fc.constantFrom(...DAYS),
  // One in ten deleted (its columns' entries stay until a renumbering; no match set holds it).
  live: fc.integer({ min: 0, max: 9 }).map((n) => n !== 0),
});

const filterArb: fc.Arbitrary<ItemFilter> = fc
  .record({
    type: fc.option(fc.subarray([...ITEM_TYPES], { minLength: 1 }), { nil: undefined }),
    tag: fc.option(fc.subarray(['a', 'B', 'e', 'nosuch'], { minLength: 1 }), { nil: undefined }),
    date_from: fc.option(fc.constantFrom(...DAYS, '2022-12-31'), { nil: undefined }),
    date_to: fc.option(fc.constantFrom(...DAYS, '2023-06-14'), { nil: undefined }),
  })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as ItemFilter);

/** The columns' source over `docs` (a dead document has none), numbered afresh by `numbering`. */
function sourceOf(docs: readonly Doc[], numbering: object = {}): ColumnSource {
  return columnSourceOf(
    docs.length,
    (doc) => (docs[doc].live ? { ...docs[doc], day: dayNumber(docs[doc].day), updated: 0 } : undefined),
    numbering,
  );
}

/** Disjunctive facets by their definition: each facet applies every part of the filter but its own. */
function expected(docs: readonly Doc[], matched: readonly number[], f: ItemFilter, facets: readonly FacetName[]) {
  const from = f.date_from ?? '0000-00-00';
  const to = f.date_to ?? '9999-99-99';
  const wanted = f.tag?.map((t) => t.toLowerCase());
  const type: Record<string, number> = Object.fromEntries(ITEM_TYPES.map((t) => [t, 0]));
  const tag = new Map<string, number>();
  let total = 0;
  for (const d of matched) {
    const doc = docs[d];
    const dateOk = doc.day >= from && doc.day <= to;
    const typeOk = !f.type || f.type.includes(doc.type);
    const tagOk = !wanted || doc.tags.some((t) => wanted.includes(t));
    if (dateOk && typeOk && tagOk) total += 1;
    if (dateOk && tagOk) type[doc.type] += 1;
    if (dateOk && typeOk) for (const t of doc.tags) tag.set(t, (tag.get(t) ?? 0) + 1);
  }
  const counts: FacetCounts = {};
  if (facets.includes('type')) counts.type = type;
  if (facets.includes('tag'))
    counts.tag = Object.fromEntries(
      [...tag].filter(([, n]) => n > 0).sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)),
    );
  return { total, counts };
}

/** The union bitmap of `matched` (bit d of word d >> 5), with room for `docs` documents. */
function bitmapOf(n: number, matched: readonly number[]): Int32Array {
  const bits = new Int32Array((n + 31) >>> 5);
  for (const d of matched) bits[d >>> 5] |= 1 << (d & 31);
  return bits;
}

/** Counts `matched` through each of the tally's ways; each answer with its way's name. */
function everyWay(
  cols: DocColumns,
  docs: readonly Doc[],
  matched: readonly number[],
  f: ItemFilter,
  facets: readonly FacetName[],
) {
  const cf = cols.compile(f);
  const union = bitmapOf(docs.length, matched);
  const out: Array<{ way: string; total: number; counts: FacetCounts }> = [];
  const ways: Array<[string, (t: FacetTally) => number]> = [
    ['words', (t) => t.visit.words!(union, 0, union.length)],
    ['word', (t) => union.reduce((n, x, w) => (x !== 0 ? n + t.visit.word!(w, x) : n), 0)],
    ['per document', (t) => matched.filter((d) => t.visit(d)).length],
  ];
  for (const [way, count] of ways) {
    const tally = new FacetTally(cols, cf, facets);
    const total = count(tally);
    out.push({ way, total, counts: tally.counts(100) });
  }
  return out;
}

describe('FacetTally: every way of counting against the definition', () => {
  it(
    'counts totals and disjunctive facets exactly, for random documents, match sets and filters',
    () => {
      fc.assert(
        fc.property(
          fc.array(docArb, { minLength: 1, maxLength: 150 }),
          fc.array(fc.nat(149)),
          filterArb,
          fc.subarray<FacetName>(['type', 'tag'], { minLength: 1 }),
          (docs, picks, f, facets) => {
            const cols = new DocColumns();
            atOnce(cols.update(sourceOf(docs)));
            const matched = [...new Set(picks.filter((d) => d < docs.length && docs[d].live))].sort((x, y) => x - y);
            const want = expected(docs, matched, f, facets);
            for (const got of everyWay(cols, docs, matched, f, facets))
              expect(got).toEqual({ way: got.way, total: want.total, counts: want.counts });
          },
        ),
        { numRuns: 200 },
      );
    },
    // A hang guard only: the property is bounded by numRuns and the sizes drawn (test/helpers/property.ts).
    PROPERTY_HANG_GUARD_MS,
  );

  it(
    'counts dense match sets from the group counts of blocks, over any cut of the words, as documents are appended',
    () => {
      fc.assert(
        fc.property(
          // Few tags, so few facet groups: blocks of 64 documents keep their counts (at most a quarter as many groups).
          fc.array(
            docArb.map((d) => ({ ...d, tags: d.tags.filter((t) => t === 'a' || t === 'b') })),
            { minLength: 1, maxLength: 400 },
          ),
          fc.integer({ min: 0, max: 400 }),
          fc.integer({ min: 0, max: 100 }),
          fc.array(fc.nat(14)),
          fc.constantFrom(64, 96, 128),
          filterArb,
          fc.subarray<FacetName>(['type', 'tag'], { minLength: 1 }),
          (docs, firstPart, percent, cuts, groupBlockDocs, f, facets) => {
            // Documents entered in two updates of one numbering: the blocks' counts are extended.
            const cols = new DocColumns({ groupBlockDocs });
            const numbering = {};
            atOnce(cols.update(sourceOf(docs.slice(0, Math.min(firstPart, docs.length)), numbering)));
            cols.groupBlocks();
            atOnce(cols.update(sourceOf(docs, numbering)));
            // Most live documents matched (each with `percent` % odds): the union is dense.
            const r = fc.sample(fc.integer({ min: 0, max: 99 }), { numRuns: docs.length, seed: docs.length + percent });
            const matched = docs.flatMap((d, i) => (d.live && r[i] < percent ? [i] : []));
            const want = expected(docs, matched, f, facets);
            const union = bitmapOf(docs.length, matched);
            // The words counted in runs cut at `cuts` (as `unionSize` and a browse count them).
            const at = [...new Set([0, ...cuts.map((c) => c % (union.length + 1)), union.length])].sort(
              (x, y) => x - y,
            );
            const tally = new FacetTally(cols, cols.compile(f), facets);
            let total = 0;
            for (let i = 1; i < at.length; i++) total += tally.visit.words!(union, at[i - 1], at[i]);
            expect({ total, counts: tally.counts(100) }).toEqual(want);
          },
        ),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('takes a dense block from its group counts and a sparse one document by document, to the same counts', () => {
    const of = Int32Array.from({ length: 96 }, (_, d) => (d * 7) % 5);
    const block = new Int32Array(5);
    for (let d = 64; d < 90; d++) block[of[d]] += 1;
    // Word 2 of a block of documents 64 … 89 (26 entered): all but two set, then three set.
    for (const x of [~0b101, 0b10011]) {
      const union = new Int32Array([0, 0, x & ((1 << 26) - 1)]);
      const direct = new Int32Array(5);
      const fromBlock = new Int32Array(5);
      groupsOfPiece(union, 2, 3, { of, count: 5 }, direct, { counts: undefined, first: 64, last: 90 });
      groupsOfPiece(union, 2, 3, { of, count: 5 }, fromBlock, { counts: block, first: 64, last: 90 });
      const want = new Int32Array(5);
      for (let d = 64; d < 90; d++) if ((union[2] >>> (d & 31)) & 1) want[of[d]] += 1;
      expect([...direct]).toEqual([...want]);
      expect([...fromBlock]).toEqual([...want]);
    }
  });

  it(
    'groupsOfPiece: the groups of any words of a block, by documents or from the block, as counted one by one',
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 0, max: 8 * 32 }),
          fc.nat(8),
          fc.nat(8),
          fc.integer({ min: 50, max: 100 }),
          fc.integer({ min: 0, max: 2 ** 31 }),
          (words, entered, x, y, percent, seed) => {
            // A block of `words` words at word 2 (documents 64 …), `entered` of them entered; the
            // union's words a … e - 1 of it, each entered document set with `percent` % odds.
            const first = 64;
            const last = first + Math.min(entered, words * 32);
            const a = 2 + Math.min(x, y, words);
            const e = 2 + Math.min(Math.max(x, y), words);
            const r = fc.sample(fc.integer({ min: 0, max: 99 }), { numRuns: 2 + words * 64, seed });
            const of = Int32Array.from({ length: first + words * 32 }, (_, d) => r[d] % 3);
            const block = new Int32Array(3);
            for (let d = first; d < last; d++) block[of[d]] += 1;
            const union = new Int32Array(2 + words);
            const want = new Int32Array(3);
            for (let d = Math.max(first, a * 32); d < Math.min(last, e * 32); d++)
              if (r[r.length - 1 - d] < percent) {
                union[d >>> 5] |= 1 << (d & 31);
                want[of[d]] += 1;
              }
            for (const given of [undefined, block]) {
              const got = new Int32Array(3);
              groupsOfPiece(union, a, e, { of, count: 3 }, got, { counts: given, first, last });
              expect([...got]).toEqual([...want]);
            }
          },
        ),
        { numRuns: 500 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('keeps counting right across renumberings that each bring new tag sets (the groups are re-entered once they outnumber the documents)', () => {
    const cols = new DocColumns();
    let most = 0;
    for (let round = 0; round < 30; round++) {
      const docs: Doc[] = Array.from({ length: 100 }, (_, i) => ({
        type: ITEM_TYPES[i % ITEM_TYPES.length],
        tags: [`r${round}-${i % 50}`, TAGS[i % TAGS.length]],
        day: DAYS[i % DAYS.length],
        live: i % 7 !== 0,
      }));
      atOnce(cols.update(sourceOf(docs, {})));
      most = Math.max(most, cols.groups().count);
      const matched = docs.flatMap((d, i) => (d.live && i % 3 !== 0 ? [i] : []));
      const f: ItemFilter = { tag: ['a', `r${round}-3`], date_from: '2023-01-01' };
      const want = expected(docs, matched, f, ['type', 'tag']);
      for (const got of everyWay(cols, docs, matched, f, ['type', 'tag']))
        expect(got).toEqual({ way: got.way, total: want.total, counts: want.counts });
    }
    // 30 rounds of up to 100 new groups each: ~3,000 without the reset at a renumbering.
    expect(most).toBeLessThanOrEqual(2 * 100 + 1024 + 100);
  });
});

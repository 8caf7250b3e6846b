import fc from 'fast-check';
import { atOnce } from '../../../service/lib/yield-to-loop';
import { sortOrder } from '../../../service/search/browse';
import { DocColumns, type ColumnSource } from '../../../service/search/doc-columns';
import { UpdateOrder } from '../../../service/search/update-order';
import { columnSourceOf } from '../../helpers/column-source';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

/*
 * The order by update time that a browse sorted by `updated:desc` reads its page from (issue 40)
 * against its definition: every document kept, sorted by the search's comparison (newest first,
 * ties by id), then sliced.
 */

interface Doc {
  readonly id: string;
  readonly updated: number;
  readonly live: boolean;
}

// Few times, so that many documents share one; negative and fractional ones, and times past 2^32
// (real ones: ms since 1970), so that every digit of the radix sort's key moves documents.
const TIMES = [-86_400_000.5, -1, 0, 1.25, 4_294_967_296, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000];

const docArb: fc.Arbitrary<Omit<Doc, 'id'>> = fc.record({
  updated: fc.constantFrom(...TIMES),
  live: fc.integer({ min: 0, max: 9 }).map((n) => n !== 0),
});

/** The columns' source over `docs` (a dead document has none), numbered afresh. */
const sourceOf = (docs: readonly Doc[]): ColumnSource =>
  columnSourceOf(docs.length, (doc) =>
    docs[doc].live ? { type: 'article', tags: [], day: 20240101, updated: docs[doc].updated } : undefined,
  );

/** Columns over `docs`. */
function columnsOf(docs: readonly Doc[]): DocColumns {
  const cols = new DocColumns();
  atOnce(cols.update(sourceOf(docs)));
  return cols;
}

describe('UpdateOrder: a browse by update time against the sort of every kept document', () => {
  it(
    'gives the same pages and totals, with and without a known total',
    () => {
      fc.assert(
        fc.property(
          // Ids in no relation to short ids, so that ties by id are not ties by short id.
          fc.array(docArb, { maxLength: 300 }).chain((ds) =>
            fc.tuple(
              fc.constant(ds),
              fc.shuffledSubarray(
                ds.map((_, i) => `id-${String(i).padStart(4, '0')}`),
                { minLength: ds.length, maxLength: ds.length },
              ),
              fc.integer({ min: 0, max: 320 }),
              fc.integer({ min: 1, max: 40 }),
              fc.integer({ min: 2, max: 5 }),
            ),
          ),
          ([drawn, ids, offset, limit, every]) => {
            const docs = drawn.map((d, i) => ({ ...d, id: ids[i] }));
            const cols = columnsOf(docs);
            const idOf = (doc: number) => docs[doc].id;
            // A filter: the live documents of short ids not divisible by `every`.
            const keep = (doc: number) => docs[doc].live && doc % every !== 0;
            const kept = docs.map((_, d) => d).filter(keep);
            const expected = [...kept].sort(sortOrder('updated:desc', cols, idOf)).slice(offset, offset + limit);
            const order = new UpdateOrder();
            atOnce(order.build(cols, docs.length));
            expect(order.generation).toBe(cols.generation);
            expect(atOnce(order.page(cols, { offset, limit }, keep, idOf))).toEqual({
              docs: expected,
              total: kept.length,
            });
            expect(atOnce(order.page(cols, { offset, limit, total: kept.length }, keep, idOf))).toEqual({
              docs: expected,
              total: kept.length,
            });
          },
        ),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it(
    'gives the same pages when one order is rebuilt over other columns, larger and smaller (its arrays reused)',
    () => {
      fc.assert(
        fc.property(fc.array(fc.array(docArb, { maxLength: 300 }), { minLength: 1, maxLength: 6 }), (sets) => {
          const order = new UpdateOrder();
          const cols = new DocColumns();
          for (const drawn of sets) {
            const docs = drawn.map((d, i) => ({ ...d, id: `id-${String((i * 7) % 301).padStart(3, '0')}-${i}` }));
            // Numbered afresh: the columns rebuilt, a generation the order was not built from.
            atOnce(cols.update(sourceOf(docs)));
            const idOf = (doc: number) => docs[doc].id;
            const keep = (doc: number) => docs[doc].live;
            const kept = docs.map((_, d) => d).filter(keep);
            atOnce(order.ensure(cols));
            expect(atOnce(order.page(cols, { offset: 0, limit: docs.length + 1 }, keep, idOf))).toEqual({
              docs: [...kept].sort(sortOrder('updated:desc', cols, idOf)),
              total: kept.length,
            });
          }
        }),
        { numRuns: 100 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('takes one step per 4,096 documents it sorts and 16,384 it reads (the loop is never held for all of them)', () => {
    const n = 100_000;
    const docs = Array.from({ length: n }, (_, i) => ({
      id: `id-${i}`,
      updated: 1_700_000_000_000 + ((i * 7919) % 1_000_003),
      live: true,
    }));
    const cols = columnsOf(docs);
    const order = new UpdateOrder();
    const build = order.build(cols, n);
    let steps = 0;
    while (!build.next().done) steps += 1;
    // The keys' pass and up to four passes of the sort, each ⌈n / 4,096⌉ steps, and a step between passes.
    expect(steps).toBeGreaterThanOrEqual(2 * Math.floor(n / 4096));
    expect(steps).toBeLessThanOrEqual(5 * Math.ceil(n / 4096) + 4);
    const page = order.page(
      cols,
      { offset: 0, limit: 10 },
      () => true,
      (d) => docs[d].id,
    );
    let pageSteps = 0;
    let r = page.next();
    for (; !r.done; r = page.next()) pageSteps += 1;
    expect(pageSteps).toBe(Math.floor(n / 16_384));
    expect(r.value.total).toBe(n);
    const newest = [...docs.keys()].sort(
      (a, b) => docs[b].updated - docs[a].updated || (docs[a].id < docs[b].id ? -1 : 1),
    );
    expect(r.value.docs).toEqual(newest.slice(0, 10));
  });
});

describe('UpdateOrder.ensure: one build per generation of the columns, shared', () => {
  it('continues a build another caller left part-way, and starts over for new columns', () => {
    const n = 20_000;
    const docs = Array.from({ length: n }, (_, i) => ({ id: `id-${i}`, updated: (i * 7919) % 1009, live: true }));
    const cols = columnsOf(docs);
    const order = new UpdateOrder();
    // A caller that stops after a few steps (the background preparation's slice ending).
    const first = order.ensure(cols);
    for (let i = 0; i < 3; i++) expect(first.next().done).toBe(false);
    const whole = new UpdateOrder();
    let alone = 0;
    for (const b = whole.build(cols, n); !b.next().done;) alone += 1;
    // The next caller finishes it in the steps left.
    let rest = 0;
    for (const e = order.ensure(cols); !e.next().done;) rest += 1;
    expect(rest).toBe(alone - 3);
    expect(order.generation).toBe(cols.generation);
    const idOf = (d: number) => docs[d].id;
    const page = (o: UpdateOrder) => atOnce(o.page(cols, { offset: 5, limit: 10 }, () => true, idOf));
    expect(page(order)).toEqual(page(whole));
    // Built: nothing to do until the columns change.
    expect(order.ensure(cols).next().done).toBe(true);
    const more = [...docs, { id: 'id-new', updated: 5_000, live: true }];
    const src = columnSourceOf(more.length, (doc) => ({
      type: 'article',
      tags: [],
      day: 20240101,
      updated: more[doc].updated,
    }));
    atOnce(cols.update(src));
    atOnce(order.ensure(cols));
    expect(
      atOnce(
        order.page(
          cols,
          { offset: 0, limit: 1 },
          () => true,
          (d) => more[d].id,
        ),
      ).docs,
    ).toEqual([n]);
  });
});

import fc from 'fast-check';
import { atOnce } from '../../../service/lib/yield-to-loop';
import { DayOrder, sortOrder } from '../../../service/search/browse';
import { DocColumns } from '../../../service/search/doc-columns';
import { columnSourceOf } from '../../helpers/column-source';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

/*
 * The order by day that a browse sorted by date reads its page from (issue 40), one instance
 * rebuilt over columns of other sizes (its array kept from build to build), against its
 * definition: every document kept, sorted by the search's comparison (by day, ties by id).
 */

const DAYS = [0, 20210301, 20230101, 20230615, 20240229];

const docArb = fc.record({ day: fc.constantFrom(...DAYS), live: fc.integer({ min: 0, max: 9 }).map((n) => n !== 0) });

describe('DayOrder: a browse by date against the sort of every kept document', () => {
  it(
    'gives the same pages when one order is rebuilt over other columns, larger and smaller',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.array(docArb, { maxLength: 300 }), { minLength: 1, maxLength: 6 }),
          fc.boolean(),
          (sets, desc) => {
            const order = new DayOrder();
            const cols = new DocColumns();
            for (const docs of sets) {
              // Numbered afresh: the columns rebuilt, a generation the order was not built from.
              atOnce(
                cols.update(
                  columnSourceOf(docs.length, (d) =>
                    docs[d].live ? { type: 'article', tags: [], day: docs[d].day, updated: 0 } : undefined,
                  ),
                ),
              );
              const idOf = (d: number) => `id-${String((d * 7) % 301).padStart(3, '0')}-${d}`;
              const keep = (d: number) => docs[d].live;
              const kept = docs.map((_, d) => d).filter(keep);
              atOnce(order.ensure(cols));
              expect(order.generation).toBe(cols.generation);
              const page = atOnce(order.page({ desc, offset: 0, limit: docs.length + 1 }, keep, idOf));
              expect(page).toEqual({
                docs: [...kept].sort(sortOrder(desc ? 'date:desc' : 'date:asc', cols, idOf)),
                total: kept.length,
              });
            }
          },
        ),
        { numRuns: 100 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

import fc from 'fast-check';
import { AppendedPostings } from '../../../../service/search/index/appended-postings';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

describe('AppendedPostings', () => {
  it(
    'gives back every term’s postings in the order added, and shifts their documents',
    () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.tuple(
              fc.integer({ min: 0, max: 20 }),
              fc.integer({ min: 0, max: 1e6 }),
              fc.integer({ min: 1, max: 0xffff }),
            ),
            { maxLength: 3000 },
          ),
          fc.integer({ min: -5, max: 5 }),
          (adds, delta) => {
            const p = new AppendedPostings();
            const want = new Map<number, number[]>();
            for (const [t, doc, tf] of adds) {
              p.add(t, doc, tf);
              want.set(t, [...(want.get(t) ?? []), doc, tf]);
            }
            const read = (t: number) => {
              const got: number[] = [];
              p.forEach(t, (doc, tf) => got.push(doc, tf));
              return got;
            };
            for (let t = 0; t <= 25; t++) expect(read(t)).toEqual(want.get(t) ?? []);
            p.shiftDocs(delta);
            for (const [t, list] of want) expect(read(t)).toEqual(list.map((x, i) => (i % 2 === 0 ? x + delta : x)));
          },
        ),
        { numRuns: 60 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

import fc from 'fast-check';
import { BLOCK_SHIFT } from '../../../../service/search/index/cursor';
import { FieldLengths, termValues } from '../../../../service/search/index/term-values';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

describe('termValues', () => {
  it(
    'gives each posting the BM25 value per field and each block the largest boosted sum of its live postings, to the last bit',
    () => {
      const posting = fc.tuple(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 40 }),
        fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0xfff0, max: 0x10010 })),
        fc.boolean(),
      );
      fc.assert(
        fc.property(
          fc.array(posting, { maxLength: 400 }),
          fc.boolean(),
          fc.double({ min: 0, max: 2, noNaN: true }),
          (rows, someDead, d) => {
            const nf = 2;
            const n = rows.length;
            const docs = Int32Array.from(rows, (_r, i) => i * 2);
            const lengths = new Int32Array(2 * n * nf + nf);
            rows.forEach(([, , l0, l1], i) => {
              lengths[i * 2 * nf] = l0;
              lengths[i * 2 * nf + 1] = l1;
            });
            const t0 = Uint16Array.from(rows, (r) => r[0]);
            const t1 = Uint16Array.from(rows, (r) => r[1]);
            // 1 for a deleted document (`SegmentedIndex.gone`).
            const gone = Uint8Array.from({ length: 2 * n }, (_x, doc) => (someDead && rows[doc >> 1]?.[4] ? 1 : 0));
            const short = new FieldLengths().get({}, lengths, nf, 2 * n);
            const s = { lengths, short, nf, avg: new Float64Array([7.5, 20.25]), k: 0.9, b: 0.4, d };
            const idf = [1.7, 0.3];
            const boost = [0.2, 1];
            const got = termValues(docs, [t0, t1], [0, 1], boost, idf, s, someDead ? gone : undefined);
            // The exhaustive scorer's expression, posting by posting.
            const value = (j: number, tf: number, doc: number) =>
              idf[j] * (d + (tf * (s.k + 1)) / (tf + s.k * (1 - s.b + (s.b * lengths[doc * nf + j]) / s.avg[j])));
            const want = new Float64Array(got.blockMax.length);
            for (let i = 0; i < n; i++) {
              let sum = 0;
              [t0, t1].forEach((t, j) => {
                const v = t[i] > 0 ? value(j, t[i], docs[i]) : 0;
                expect(got.vals[j]![i]).toBe(v);
                if (t[i] > 0) sum += boost[j] * value(j, t[i], docs[i]);
              });
              if (someDead && gone[docs[i]] !== 0) continue;
              want[i >> BLOCK_SHIFT] = Math.max(want[i >> BLOCK_SHIFT], sum);
            }
            expect([...got.blockMax]).toEqual([...want]);
            // Not kept: the same bounds, no values.
            const bare = termValues(docs, [t0, t1], [0, 1], boost, idf, s, someDead ? gone : undefined, false);
            expect(bare.vals).toEqual([null, null]);
            expect([...bare.blockMax]).toEqual([...want]);
          },
        ),
        { numRuns: 80 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('FieldLengths follows appended documents, and starts again for another base', () => {
    const fl = new FieldLengths();
    const base = {};
    const lengths = Int32Array.of(1, 2, 3, 70000, 5, 6);
    expect(fl.get(base, lengths, 2, 2).map((a) => [...a.subarray(0, 2)])).toEqual([
      [1, 3],
      [2, 0xffff],
    ]);
    expect(fl.get(base, lengths, 2, 3).map((a) => [...a.subarray(0, 3)])).toEqual([
      [1, 3, 5],
      [2, 0xffff, 6],
    ]);
    const renumbered = Int32Array.of(5, 6);
    expect(fl.get({}, renumbered, 2, 1).map((a) => [...a.subarray(0, 1)])).toEqual([[5], [6]]);
  });

  it('has no values for a field whose tfs are null', () => {
    const lengths = new Int32Array(4).fill(3);
    const short = new FieldLengths().get({}, lengths, 2, 2);
    const got = termValues(Int32Array.of(0, 1), [null, Uint16Array.of(1, 2)], [0, 1], [1, 1], [0, 1], {
      lengths,
      short,
      nf: 2,
      avg: new Float64Array([3, 3]),
      k: 1.2,
      b: 0.75,
      d: 0,
    });
    expect(got.vals[0]).toBeNull();
    expect(got.blockMax[0]).toBe(got.vals[1]![1]);
  });
});

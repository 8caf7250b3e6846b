import fc from 'fast-check';
import { PositionWriter, positionsOf, windowCounts } from '../../../../service/search/index/positions';
import { atOnce } from '../../../../service/lib/yield-to-loop';
import { gallop, liveWindows, windowsOf } from '../../../../service/search/index/window-df';
import { naiveWindows } from '../../../../tools/oracles/exhaustive-proximity';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

describe('positions', () => {
  it(
    'round-trips a token sequence of entry indexes through the varint stream (one byte below 128, more above)',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 0, max: 40_000 }), { maxLength: 60 }),
          fc.integer({ min: 0, max: 5 }),
          (entries, at) => {
            const w = new PositionWriter(new Uint8Array(at), at, entries.length);
            for (const e of entries) w.push(e);
            expect(w.end - at).toBe(entries.reduce((n, e) => n + (e < 128 ? 1 : e < 16384 ? 2 : 3), 0));
            for (const target of new Set(entries)) {
              const r = positionsOf(w.bytes, at, w.end, target, -1, new Int32Array(1), new Int32Array(0));
              expect([...r.pa.subarray(0, r.na)]).toEqual(entries.flatMap((e, i) => (e === target ? [i] : [])));
            }
          },
        ),
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it(
    'counts ordered and unordered windows as the ranking sweep does (first unused b within the span), on any positions',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.constantFrom(0, 1, 2), { maxLength: 40 }),
          fc.integer({ min: 2, max: 12 }),
          (tokens, window) => {
            const pa = tokens.flatMap((t, i) => (t === 0 ? [i] : []));
            const pb = tokens.flatMap((t, i) => (t === 1 ? [i] : []));
            const got = windowCounts(Int32Array.from(pa), pa.length, Int32Array.from(pb), pb.length, window, {
              o: 0,
              u: 0,
            });
            expect(got).toEqual(naiveWindows(pa, pb, window));
          },
        ),
        { numRuns: 500 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it(
    'gallops to the first value at or above a target',
    () => {
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.integer({ min: 0, max: 200 })),
          fc.integer({ min: -1, max: 201 }),
          (xs, target) => {
            const docs = Int32Array.from(xs.sort((a, b) => a - b));
            const want = docs.findIndex((d) => d >= target);
            expect(gallop(docs, 0, docs.length, target)).toBe(want < 0 ? docs.length : want);
          },
        ),
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe('window frequencies of many documents', () => {
  // Which documents hold a window, scattered (a hash of the id): an ordered one, an unordered one only, or none.
  const kind = (doc: number) => (Math.imul(doc, 0x9e3779b1) >>> 29) % 3;
  const holds = (doc: number, out: { o: number; u: number }) =>
    Object.assign(out, { o: kind(doc) === 0 ? 1 : 0, u: kind(doc) < 2 ? 1 : 0 });
  const both = Int32Array.from({ length: 40_000 }, (_, i) => i);
  const exact = (keep: (doc: number) => boolean) => ({
    o: [...both].filter((d) => keep(d) && kind(d) === 0).length,
    u: [...both].filter((d) => keep(d) && kind(d) < 2).length,
  });

  it('counts every document holding both terms exactly, however many (no sample: replicas agree whatever their segments)', () => {
    const w = atOnce(windowsOf(both, both.length, holds));
    expect(liveWindows(w, undefined)).toEqual(exact(() => true));
    expect(liveWindows(w, (doc) => doc < 3000)).toEqual(exact((doc) => doc >= 3000));
  });
});

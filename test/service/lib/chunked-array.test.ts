import fc from 'fast-check';
import { ChunkedArray } from '../../../service/lib/chunked-array';

describe('ChunkedArray', () => {
  test('pushes, gets and sets across chunks as an array does', () => {
    const list = new ChunkedArray<number | null>();
    const n = 3 * 65_536 + 7;
    const at: number[] = [];
    for (let i = 0; i < n; i++) if (list.push(i) !== i) at.push(i);
    expect(at).toEqual([]);
    expect(list.length).toBe(n);
    for (const i of [0, 65_535, 65_536, 2 * 65_536 + 1, n - 1]) expect(list.get(i)).toBe(i);
    list.set(65_536, null);
    expect(list.get(65_536)).toBeNull();
    const copy = list.toArray();
    expect(copy).toHaveLength(n);
    expect(copy[65_535]).toBe(65_535);
    expect(copy[65_536]).toBeNull();
    const again = ChunkedArray.from(copy);
    expect(again.length).toBe(n);
    expect([again.get(0), again.get(65_536), again.get(n - 1)]).toEqual([0, null, n - 1]);
  });

  test('property: any pushes and sets equal an array', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer(),
            fc.nat(500).map((i) => ({ set: i })),
          ),
        ),
        (ops) => {
          const list = new ChunkedArray<number>();
          const ref: number[] = [];
          for (const o of ops)
            if (typeof o === 'number') {
              list.push(o);
              ref.push(o);
            } else if (o.set < ref.length) {
              list.set(o.set, -o.set);
              ref[o.set] = -o.set;
            }
          expect(list.toArray()).toEqual(ref);
          ref.forEach((v, i) => expect(list.get(i)).toBe(v));
        },
      ),
      { numRuns: 200, seed: 41 },
    );
  });
});

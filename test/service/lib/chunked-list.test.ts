import fc from 'fast-check';
import { arrayChunks, CHUNK, ChunkedList, typedChunks } from '../../../service/lib/chunked-list';

const int32s = typedChunks((n) => new Int32Array(n));
const uint32s = typedChunks((n) => new Uint32Array(n));

describe('ChunkedList', () => {
  test('of JS arrays: pushes, gets and sets across chunks as an array does', () => {
    const list = new ChunkedList(arrayChunks<number | null>());
    const n = 3 * CHUNK + 7;
    const at: number[] = [];
    for (let i = 0; i < n; i++) if (list.push(i) !== i) at.push(i);
    expect(at).toEqual([]);
    expect(list.length).toBe(n);
    for (const i of [0, CHUNK - 1, CHUNK, 2 * CHUNK + 1, n - 1]) expect(list.get(i)).toBe(i);
    list.set(CHUNK, null);
    expect(list.get(CHUNK)).toBeNull();
    const copy = list.toArray();
    expect(copy).toHaveLength(n);
    expect(copy[CHUNK - 1]).toBe(CHUNK - 1);
    expect(copy[CHUNK]).toBeNull();
    // A copy: writing to it leaves the list as it was.
    copy[0] = -1;
    expect(list.get(0)).toBe(0);
  });

  test('of typed arrays: pushes across chunks after a head it was given, as one array would', () => {
    const head = Int32Array.from({ length: 70_000 }, (_, i) => i);
    const numbers = new ChunkedList(int32s, head);
    expect(numbers.length).toBe(70_000);
    const at: number[] = [];
    for (let i = 70_000; i < 200_000; i++) if (numbers.push(0) !== i) at.push(i);
    expect(at).toEqual([]);
    expect(numbers.length).toBe(200_000);
    expect(numbers.get(150_000)).toBe(0);
    for (const i of [69_999, 70_000, 70_000 + CHUNK - 1, 70_000 + CHUNK, 199_999]) numbers.set(i, -i);
    // The head is taken, not copied: a write to it shows in the array given.
    expect(head[69_999]).toBe(-69_999);
    const copy = numbers.toArray();
    expect(copy).toBeInstanceOf(Int32Array);
    expect(copy).toHaveLength(200_000);
    expect([copy[5], copy[69_999], copy[70_000], copy[135_535], copy[135_536], copy[199_999]]).toEqual([
      5, -69_999, -70_000, -135_535, -135_536, -199_999,
    ]);
    expect(new ChunkedList(int32s, Int32Array.of(1, 2)).toArray()).toEqual(Int32Array.of(1, 2));
    expect(new ChunkedList(int32s).toArray()).toEqual(new Int32Array(0));
  });

  test('property: any pushes and sets equal an array, of either kind of chunk, with or without a head', () => {
    fc.assert(
      fc.property(
        fc.nat(70_000),
        fc.nat(140_000),
        fc.array(fc.tuple(fc.nat(210_000), fc.integer({ min: 0, max: 2 ** 32 - 1 }))),
        (headLength, pushes, writes) => {
          const numbers = new ChunkedList(uint32s, new Uint32Array(headLength));
          const values = new ChunkedList(
            arrayChunks<number>(),
            Array.from({ length: headLength }, () => 0),
          );
          const ref = new Uint32Array(headLength + pushes);
          let wrongIndex = 0;
          for (let i = 0; i < pushes; i++) {
            ref[headLength + i] = i;
            if (numbers.push(i) !== headLength + i || values.push(i) !== headLength + i) wrongIndex++;
          }
          expect(wrongIndex).toBe(0);
          for (const [at, v] of writes) {
            const i = at % Math.max(1, ref.length);
            if (i >= ref.length) continue;
            numbers.set(i, v);
            values.set(i, v);
            ref[i] = v;
          }
          expect([numbers.length, values.length]).toEqual([ref.length, ref.length]);
          // Compared as bytes: toEqual walks 210,000 numbers one by one for seconds.
          const bytes = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
          expect(bytes(numbers.toArray()).equals(bytes(ref))).toBe(true);
          expect(bytes(Uint32Array.from(values.toArray())).equals(bytes(ref))).toBe(true);
          for (const [at] of writes) {
            const i = at % Math.max(1, ref.length);
            if (i < ref.length) expect([numbers.get(i), values.get(i)]).toEqual([ref[i], ref[i]]);
          }
        },
      ),
      { numRuns: 30, seed: 41 },
    );
  });
});

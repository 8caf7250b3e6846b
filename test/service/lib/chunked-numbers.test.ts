import fc from 'fast-check';
import { ChunkedNumbers } from '../../../service/lib/chunked-numbers';

const int32s = (n: number) => new Int32Array(n);

describe('ChunkedNumbers', () => {
  test('reads and writes across chunks and after a head it was given, as one array would', () => {
    const head = Int32Array.from({ length: 70_000 }, (_, i) => i);
    const numbers = new ChunkedNumbers(int32s, head);
    expect(numbers.capacity).toBe(70_000);
    numbers.reserve(70_001);
    expect(numbers.capacity).toBe(70_000 + 65_536);
    numbers.reserve(200_000);
    expect(numbers.capacity).toBe(70_000 + 2 * 65_536);
    expect(numbers.get(150_000)).toBe(0);
    for (const i of [69_999, 70_000, 70_000 + 65_535, 70_000 + 65_536, 199_999]) numbers.set(i, -i);
    // The head is taken, not copied: a write to it shows in the array given.
    expect(head[69_999]).toBe(-69_999);
    const copy = numbers.slice(200_000);
    expect(copy).toBeInstanceOf(Int32Array);
    expect(copy).toHaveLength(200_000);
    expect([copy[5], copy[69_999], copy[70_000], copy[135_535], copy[135_536], copy[199_999]]).toEqual([
      5, -69_999, -70_000, -135_535, -135_536, -199_999,
    ]);
    expect(numbers.slice(10)).toEqual(Int32Array.from({ length: 10 }, (_, i) => i));
  });

  test('property: any reserves and writes, with or without a head, equal a plain array', () => {
    fc.assert(
      fc.property(
        fc.nat(70_000),
        fc.array(fc.tuple(fc.nat(200_000), fc.integer({ min: 0, max: 2 ** 32 - 1 }))),
        (headLength, writes) => {
          const numbers = new ChunkedNumbers((n) => new Uint32Array(n), new Uint32Array(headLength));
          // Room for every capacity reached: the head and the chunks that cover index 200,000.
          const ref = new Uint32Array(70_000 + 4 * 65_536);
          for (const [i, v] of writes) {
            numbers.reserve(i + 1);
            numbers.set(i, v);
            ref[i] = v;
          }
          const n = numbers.capacity;
          // Compared as bytes: toEqual walks 200,000 numbers one by one for seconds.
          const bytes = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
          expect(bytes(numbers.slice(n)).equals(bytes(ref.subarray(0, n)))).toBe(true);
          for (const [i] of writes) expect(numbers.get(i)).toBe(ref[i]);
        },
      ),
      { numRuns: 30, seed: 41 },
    );
  });
});

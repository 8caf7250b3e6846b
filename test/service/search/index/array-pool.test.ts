import fc from 'fast-check';
import { mapped } from '../../../../service/lib/untracked-arrays';
import { ArrayPool } from '../../../../service/search/index/array-pool';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

describe('ArrayPool', () => {
  it('lends an array given back to a later take of at least half its length, as a view of the length asked', () => {
    const pool = new ArrayPool((n) => new Int32Array(n), 1 << 20);
    const a = pool.take(1000);
    a[999] = 7;
    pool.give(a);
    expect(pool.bytes).toBe(4000);
    const b = pool.take(600);
    expect(b.length).toBe(600);
    expect(b.buffer).toBe(a.buffer);
    expect(pool.bytes).toBe(0);
    // Too short for a free array twice as long: a new one.
    pool.give(b);
    const c = pool.take(400);
    expect(c.buffer).not.toBe(a.buffer);
    expect(pool.bytes).toBe(4000);
  });

  it('lends arrays over a growable buffer again at a fixed length, not tracking the buffer', () => {
    const pool = new ArrayPool((n) => mapped.f64(n), 1 << 20);
    const a = pool.take(1000);
    pool.give(a.subarray(0, 600));
    const b = pool.take(1000);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(1000);
    // A length-tracking view would follow the buffer as it grows; the pool's keep their length.
    (b.buffer as SharedArrayBuffer & { grow(n: number): void }).grow(b.buffer.byteLength);
    expect(b.length).toBe(1000);
    pool.give(b);
    expect(pool.take(800).length).toBe(800);
  });

  it('ignores arrays it did not lend and arrays given twice', () => {
    const pool = new ArrayPool((n) => new Float64Array(n), 1 << 20);
    pool.give(new Float64Array(100));
    pool.give(null);
    expect(pool.bytes).toBe(0);
    const a = pool.take(100);
    pool.give(a);
    pool.give(a);
    expect(pool.bytes).toBe(800);
    // Given twice, lent once: a second take does not get the same buffer.
    expect(pool.take(100).buffer).toBe(a.buffer);
    expect(pool.take(100).buffer).not.toBe(a.buffer);
  });

  it('keeps free arrays within its budget, dropping the smallest first', () => {
    const pool = new ArrayPool((n) => new Uint16Array(n), 3000);
    const small = pool.take(200);
    const mid = pool.take(500);
    const big = pool.take(1000);
    pool.give(small);
    pool.give(mid);
    expect(pool.bytes).toBe(1400);
    pool.give(big);
    // 400 + 1000 + 2000 > 3000: the smallest goes.
    expect(pool.bytes).toBe(3000);
    expect(pool.take(500).buffer).toBe(mid.buffer);
    pool.clear();
    expect(pool.bytes).toBe(0);
  });

  it(
    'never lends one buffer twice at once (arrays lent and given back in any order)',
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constant(0)), { maxLength: 200 }),
          fc.integer({ min: 0, max: 1024 }),
          (ops, budget) => {
            const pool = new ArrayPool<Int32Array>((n) => new Int32Array(n), budget);
            const out: Int32Array[] = [];
            for (const op of ops) {
              if (op === 0) {
                pool.give(out.shift());
                continue;
              }
              const a = pool.take(op);
              expect(a.length).toBe(op);
              expect(out.some((o) => o.buffer === a.buffer)).toBe(false);
              out.push(a);
            }
            expect(pool.bytes).toBeLessThanOrEqual(budget);
          },
        ),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

import fc from 'fast-check';
import { IN_PLACE_FROM_BYTES, grow, growable } from '../../../../service/search/index/growable';

/** The kind of an array's buffer (`instanceof` would compare constructors across jest's realms). */
const kind = (a: ArrayBufferView): string => Object.prototype.toString.call(a.buffer);

describe('grow', () => {
  const LARGE = IN_PLACE_FROM_BYTES / 4;

  it('keeps the elements and doubles; below IN_PLACE_FROM_BYTES into a new ordinary buffer', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 40 }), fc.nat(100), (xs, more) => {
        const a = Int32Array.from(xs);
        const b = grow(a, xs.length + more);
        expect([...b.subarray(0, xs.length)]).toEqual(xs);
        expect(b.length).toBeGreaterThanOrEqual(xs.length + more);
        if (more > 0) {
          expect(b.length).toBe(Math.max(xs.length + more, xs.length * 2, 16));
          expect(b.buffer).not.toBe(a.buffer);
          expect(kind(b)).toBe('[object ArrayBuffer]');
          expect([...b.subarray(xs.length)].every((x) => x === 0)).toBe(true);
        } else expect(b).toBe(a);
      }),
    );
  });

  it('from IN_PLACE_FROM_BYTES moves the array once into a growable buffer, then grows that in place', () => {
    const a = new Int32Array(LARGE).map((_x, i) => i);
    const b = grow(a, LARGE + 1);
    expect(kind(b)).toBe('[object SharedArrayBuffer]');
    expect(b.length).toBe(2 * LARGE);
    expect(b[LARGE - 1]).toBe(LARGE - 1);
    b[2 * LARGE - 1] = 7;
    const c = grow(b, 2 * LARGE + 1);
    // The same memory, longer: no copy, and the old view still reads what it held.
    expect(c.buffer).toBe(b.buffer);
    expect(c.length).toBe(4 * LARGE);
    expect([c[LARGE - 1], c[2 * LARGE - 1], c[4 * LARGE - 1]]).toEqual([LARGE - 1, 7, 0]);
    expect(b.length).toBe(2 * LARGE);
    expect(b[2 * LARGE - 1]).toBe(7);
  });

  it('grows in place only the view it last returned: a part or a stale view is copied, so no two writers share bytes', () => {
    const owner = grow(new Uint16Array(0), IN_PLACE_FROM_BYTES);
    const part = owner.subarray(0, 10);
    const fromPart = grow(part, 11);
    expect(fromPart.buffer).not.toBe(owner.buffer);
    const longer = grow(owner, owner.length + 1);
    expect(longer.buffer).toBe(owner.buffer);
    // `owner` is stale now: growing it again copies, and writes to the copy stay out of `longer`.
    const stale = grow(owner, owner.length + 1);
    expect(stale.buffer).not.toBe(owner.buffer);
    stale[owner.length] = 3;
    expect(longer[owner.length]).toBe(0);
  });
});

describe('growable', () => {
  it('makes zeroed arrays that grow in place from IN_PLACE_FROM_BYTES, and ones of their own size below', () => {
    const big = growable(Int32Array, IN_PLACE_FROM_BYTES / 4);
    expect(big.every((x) => x === 0)).toBe(true);
    expect(grow(big, big.length + 1).buffer).toBe(big.buffer);
    const small = growable(Uint8Array, 100);
    expect(small.buffer.byteLength).toBe(100);
    expect(grow(small, 101).buffer).not.toBe(small.buffer);
  });
});

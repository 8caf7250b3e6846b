import { f64, i32, u16, u32, u8 } from '../../../service/lib/untracked-arrays';

describe('untracked arrays', () => {
  it('makes zeroed typed arrays of the asked kind and length over a SharedArrayBuffer', () => {
    const made = [i32(5), u32(5), u16(5), u8(5), f64(5)];
    expect(made.map((a) => a.constructor.name)).toEqual([
      'Int32Array',
      'Uint32Array',
      'Uint16Array',
      'Uint8Array',
      'Float64Array',
    ]);
    for (const a of made) {
      expect(a.length).toBe(5);
      expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(Array.from(a)).toEqual([0, 0, 0, 0, 0]);
    }
    expect(i32(0).length).toBe(0);
  });

  it('adds nothing to the external memory V8 paces its collections by, where an ArrayBuffer adds its bytes', () => {
    const bytes = 64 * 1024 * 1024;
    const before = process.memoryUsage().external;
    const untracked = u8(bytes);
    const afterShared = process.memoryUsage().external;
    const plain = new Uint8Array(bytes);
    const afterPlain = process.memoryUsage().external;
    expect(afterShared - before).toBeLessThan(bytes / 2);
    expect(afterPlain - afterShared).toBeGreaterThanOrEqual(bytes);
    expect(untracked.length + plain.length).toBe(2 * bytes);
  });
});

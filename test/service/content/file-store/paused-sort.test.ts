import fc from 'fast-check';
import { pausedSort } from '../../../../service/content/file-store/paused-sort';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

describe('pausedSort', () => {
  it(
    'orders as a stable Array.prototype.sort does, pausing along the way',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 300 }), async (keys) => {
          let pauses = 0;
          const order = await pausedSort(
            keys.length,
            (a, b) => keys[a] - keys[b],
            async () => void pauses++,
          );
          expect([...order]).toEqual(keys.map((_, i) => i).sort((a, b) => keys[a] - keys[b]));
        }),
        { numRuns: 200 },
      );
      let pauses = 0;
      await pausedSort(
        20_000,
        (a, b) => b - a,
        async () => void pauses++,
      );
      expect(pauses).toBeGreaterThan(10);
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

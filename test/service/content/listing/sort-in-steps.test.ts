import fc from 'fast-check';
import { sortInSteps } from '../../../../service/content/listing/sort-in-steps';

describe('sortInSteps', () => {
  it('sorts as Array.prototype.sort does, awaiting a step wherever one is due', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer()), fc.integer({ min: 1, max: 7 }), async (values, every) => {
        let calls = 0;
        let steps = 0;
        const due = () =>
          ++calls % every === 0 ? new Promise<void>((r) => setImmediate(() => (steps++, r()))) : undefined;
        const input = [...values];
        const sorted = await sortInSteps(input, (a, b) => a - b, due);
        expect(sorted).toEqual([...values].sort((a, b) => a - b));
        expect(input).toEqual(values);
        expect(steps).toBe(Math.floor(calls / every));
      }),
      { numRuns: 200 },
    );
  });
});

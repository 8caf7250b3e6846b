import { crossValidate, repeatedCrossValidation } from '../../../bench/search/cross-validate';

describe('cross-validated choice of a ranking configuration', () => {
  it('scores each query with the configuration chosen without it', () => {
    // "lucky" wins on the mean (0.55 against 0.5) thanks to query 0 alone.
    const configs = [
      { name: 'steady', scores: [0.5, 0.5, 0.5, 0.5] },
      { name: 'lucky', scores: [1.9, 0.1, 0.1, 0.1] },
    ];
    const cv = crossValidate(configs, 4, 1);
    // Leaving query 0 out, steady is chosen (0.5 > 0.1) and scores it 0.5; leaving out any
    // other, lucky is chosen (0.7 > 0.5) and scores it 0.1.
    expect([...cv.chosen].sort()).toEqual(['lucky', 'lucky', 'lucky', 'steady']);
    expect(cv.heldOut).toBeCloseTo((0.5 + 3 * 0.1) / 4, 12);
    expect(cv.training).toBeCloseTo((0.5 + 3 * 0.7) / 4, 12);
  });

  it('is deterministic per seed and gives a single configuration its own mean', () => {
    const configs = [{ name: 'only', scores: [0.2, 0.4, 0.6, 0.8, 1] }];
    expect(crossValidate(configs, 2, 7)).toEqual(crossValidate(configs, 2, 7));
    expect(crossValidate(configs, 5, 3).heldOut).toBeCloseTo(0.6, 12);
    const r = repeatedCrossValidation(configs, 2, 5);
    expect([r.heldOut, r.min, r.max]).toEqual([
      expect.closeTo(0.6, 12),
      expect.closeTo(0.6, 12),
      expect.closeTo(0.6, 12),
    ]);
  });

  it('refuses folds it cannot make and configurations of different queries', () => {
    expect(() => crossValidate([{ name: 'a', scores: [1, 2] }], 3, 1)).toThrow(/k 3, queries 2/);
    expect(() =>
      crossValidate(
        [
          { name: 'a', scores: [1, 2] },
          { name: 'b', scores: [1] },
        ],
        2,
        1,
      ),
    ).toThrow(/same queries/);
  });
});

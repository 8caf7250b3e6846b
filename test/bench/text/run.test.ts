import { measure, medianMs, report } from '../../../bench/text/run';

describe('text passes side by side', () => {
  it('times every pass before and after and reports ratios', () => {
    const b = measure({ sizes: [500, 2_000, 5_000], hostileSizes: [200, 400], reps: 1 });
    expect(b.plainText.map((r) => r.what)).toEqual([
      'README Markdown, 500 chars',
      'README Markdown, 2,000 chars',
      'README Markdown, 5,000 chars',
    ]);
    expect(b.hostile).toHaveLength(8);
    for (const r of [...b.plainText, ...b.snippet, ...b.hostile]) {
      expect(r.beforeMs).toBeGreaterThanOrEqual(0);
      expect(r.afterMs).toBeGreaterThanOrEqual(0);
    }
    const md = report(b);
    expect(md).toContain(
      '| Growth of the time with the size | before, 500 → 5,000 | after, 500 → 5,000 | before, 2,000 → 5,000 | after, 2,000 → 5,000 |',
    );
    expect(md).toMatch(/\| snippet \(common words\) \| [\d.]+× \| [\d.]+× \| [\d.]+× \| [\d.]+× \|/);
  });

  it('reports the median of the repetitions', () => {
    let n = 0;
    expect(medianMs(() => (n += 1), 3)).toBeGreaterThanOrEqual(0);
    expect(n).toBeGreaterThanOrEqual(4);
  });
});

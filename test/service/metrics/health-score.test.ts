import { GRADE_VALUES } from '../../../contract';
import { MIN_VOLUME, healthScore, performanceGrade } from '../../../service/metrics/health-score';

describe('health score', () => {
  it('is 100 for a quiet healthy service', () => {
    expect(healthScore({ recentSuccessRate: 100, avgResponseTimeMs: 0, kvstoreDegraded: false })).toBe(100);
  });

  it('weights success 60%, latency 30%, dependencies 10%', () => {
    expect(healthScore({ recentSuccessRate: 50, avgResponseTimeMs: 0, kvstoreDegraded: false })).toBe(70);
    expect(healthScore({ recentSuccessRate: 100, avgResponseTimeMs: 1100, kvstoreDegraded: false })).toBe(85);
    expect(healthScore({ recentSuccessRate: 100, avgResponseTimeMs: 5000, kvstoreDegraded: false })).toBe(70);
    expect(healthScore({ recentSuccessRate: 100, avgResponseTimeMs: 200, kvstoreDegraded: true })).toBe(90);
    expect(healthScore({ recentSuccessRate: 0, avgResponseTimeMs: 9999, kvstoreDegraded: true })).toBe(0);
  });

  it('tempers the success rate below MIN_VOLUME requests with a prior of successes', () => {
    expect(MIN_VOLUME).toBe(20);
    // One 404 on an idle service: (1*0 + 19*100)/20 = 95 → 0.6*95 + 40 = 97
    expect(healthScore({ recentSuccessRate: 0, recentCount: 1, avgResponseTimeMs: 0, kvstoreDegraded: false })).toBe(
      97,
    );
    expect(healthScore({ recentSuccessRate: 0, recentCount: 20, avgResponseTimeMs: 0, kvstoreDegraded: false })).toBe(
      40,
    );
    expect(
      healthScore({ recentSuccessRate: 50, recentCount: 1000, avgResponseTimeMs: 0, kvstoreDegraded: false }),
    ).toBe(70);
    expect(healthScore({ recentSuccessRate: 100, recentCount: 0, avgResponseTimeMs: 0, kvstoreDegraded: false })).toBe(
      100,
    );
  });

  it.each([
    [100, 'A'],
    [90, 'A'],
    [89.9, 'B'],
    [80, 'B'],
    [79, 'C'],
    [70, 'C'],
    [65, 'D'],
    [60, 'D'],
    [59.9, 'F'],
    [0, 'F'],
  ] as const)('score %d → grade %s', (score, grade) => {
    expect(performanceGrade(score)).toBe(grade);
  });

  it('encodes grades on the GPA scale', () => {
    expect(GRADE_VALUES).toEqual({ A: 4, B: 3, C: 2, D: 1, F: 0 });
  });
});
